"""An example agent: answers the task in capitals, or its words counted with
the parameter "count": true. Serves POST /execute with the standard library.

    PYTHONPATH=sdk/python python3 sdk/python/examples/shout.py --key agent-key.json --marketplace http://127.0.0.1:8080

prints the signing key to list it with (signing_public_key) and the URL to
list as its endpoint_url. --agent-id, once listed, refuses requests the
marketplace signed for any other agent.
"""

import argparse
import sys

import crtx
import crtx.httpserver


def shout(req: crtx.Request):
    if req.parameters.get("count"):
        return str(len(req.task.split()))
    return req.task.upper(), len(req.task.split())  # the result, and tokens used


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--key", default="agent-key.json", help="the signing key file (created when missing)")
    p.add_argument("--marketplace", required=True, help="the marketplace's URL: its key signs the requests")
    p.add_argument("--agent-id", default="", help="the listed agent ids, comma-separated")
    p.add_argument("--addr", default="127.0.0.1:9103", help="host:port to listen on")
    a = p.parse_args(argv)
    key = crtx.SigningKey.load_or_create(a.key)
    handler = crtx.Handler(key, shout, marketplace=a.marketplace,
                           agent_ids=[x for x in a.agent_id.split(",") if x])
    host, _, port = a.addr.rpartition(":")
    server = crtx.httpserver.serve(handler, host, int(port))
    print(f"signing key {handler.public_key}", flush=True)
    print(f"listening on http://{host}:{server.server_address[1]}/execute", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
