"""A Handler as a plain ASGI application, for any ASGI server or framework
(uvicorn, hypercorn; Starlette's and FastAPI's Mount):

    app = crtx.asgi.app(handler)                      # answers POST on any path
    fastapi_app.mount("/execute", crtx.asgi.app(handler))
"""

import asyncio
import json

from .creator import MAX_BODY, Handler


def app(handler: Handler):
    """The ASGI 3 callable that answers the creator protocol with handler."""

    async def asgi(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            raise ValueError(f"crtx.asgi serves http, not {scope['type']}")
        if scope["method"] != "POST":
            await _send(send, 405, [("Allow", "POST"), ("Content-Type", "application/json")],
                        json.dumps({"error": "use POST"}).encode())
            return
        body = bytearray()
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            body += msg.get("body", b"")
            if len(body) > MAX_BODY:
                await _send(send, 413, [("Content-Type", "application/json")],
                            json.dumps({"error": "the request is too large"}).encode())
                return
            if not msg.get("more_body", False):
                break
        headers = {}
        for k, v in scope.get("headers", []):
            headers[k.decode("latin-1")] = v.decode("latin-1")
        # handle blocks until the answer is ready: off the event loop.
        status, out_headers, out = await asyncio.to_thread(handler.handle, bytes(body), headers, True)
        if isinstance(out, bytes):
            await _send(send, status, out_headers, out)
            return
        # A stream: each event sent as it comes (each wait off the loop too).
        hdrs = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in out_headers]
        await send({"type": "http.response.start", "status": status, "headers": hdrs})
        while (chunk := await asyncio.to_thread(next, out, None)) is not None:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return asgi


async def _send(send, status, headers, body):
    hdrs = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    hdrs.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})
