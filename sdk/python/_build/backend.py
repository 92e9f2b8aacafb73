"""The SDK's build backend (PEP 517, PEP 660): a pure-Python wheel written
with the standard library alone, so that `pip install ./sdk/python` works on
any Python 3.11 or later, offline, with or without build isolation, whatever
setuptools or wheel it has (setuptools before 70 needs the wheel package to
build one, which a stock pyenv Python lacks)."""

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata(p):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(ROOT, p["readme"]), encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def _sources():
    """The package's files, by their path in the wheel."""
    pkg = os.path.join(ROOT, "crtx")
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            yield f"crtx/{name}", os.path.join(pkg, name)


def _wheel(directory, files):
    """Writes a py3-none-any wheel of files ({path: bytes}) and its
    dist-info, and returns its name."""
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    info = f"{dist}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata(p).encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: crtx _build/backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(path, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {}
    for path, source in _sources():
        with open(source, "rb") as f:
            files[path] = f.read()
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file puts on sys.path a folder that holds only a link to the
    # checkout's package: edits take effect without reinstalling, and the
    # SDK's tests and examples folders stay out of every import.
    return _wheel(wheel_directory, {"crtx_editable.pth": (os.path.join(ROOT, "_build", "editable") + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    name = f"{dist}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ["pyproject.toml", p["readme"], "_build/backend.py"] + [path for path, _ in _sources()]:
            tar.add(os.path.join(ROOT, rel), arcname=f"{dist}/{rel}")
        meta = _metadata(p).encode()
        ti = tarfile.TarInfo(f"{dist}/PKG-INFO")
        ti.size = len(meta)
        tar.addfile(ti, io.BytesIO(meta))
    return name
