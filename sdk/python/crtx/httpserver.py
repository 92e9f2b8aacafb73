"""A Handler served by the standard library's http.server:

    server = crtx.httpserver.serve(handler, "127.0.0.1", 9103, path="/execute")
    server.serve_forever()
"""

import http.server
import json

from .creator import MAX_BODY, Handler


def request_handler(handler: Handler, path: str | None = "/execute") -> type[http.server.BaseHTTPRequestHandler]:
    """A BaseHTTPRequestHandler class answering POST at path (any path when
    None) with handler."""

    class CreatorRequestHandler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            if path is not None and self.path.split("?", 1)[0] != path:
                return self._answer(404, [("Content-Type", "application/json")], b'{"error":"not found"}')
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                return self._answer(411, [("Content-Type", "application/json")],
                                    b'{"error":"Content-Length is required"}')
            if length < 0 or length > MAX_BODY:
                self.close_connection = True
                return self._answer(413, [("Content-Type", "application/json")],
                                    b'{"error":"the request is too large"}')
            body = self.rfile.read(length)
            status, headers, out = handler.handle(body, {k: v for k, v in self.headers.items()}, True)
            if isinstance(out, bytes):
                return self._answer(status, headers, out)
            # A stream: no length known, so the connection closes at its end;
            # each event is flushed as it comes.
            self.close_connection = True
            self.send_response(status)
            for k, v in headers + [("Connection", "close")]:
                self.send_header(k, v)
            self.end_headers()
            for chunk in out:
                self.wfile.write(chunk)
                self.wfile.flush()

        def do_GET(self):
            self._answer(405, [("Allow", "POST"), ("Content-Type", "application/json")],
                         json.dumps({"error": "use POST"}).encode())

        def _answer(self, status, headers, body):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):  # noqa: A002 — the standard library's name
            pass  # requests carry callers' tasks: a service logs what it chooses to

    return CreatorRequestHandler


def serve(handler: Handler, host: str = "127.0.0.1", port: int = 0, path: str | None = "/execute"
          ) -> http.server.ThreadingHTTPServer:
    """A threading HTTP server bound to host:port (0: a free port) answering
    POST at path with handler; call serve_forever() on it (or in a thread)."""
    server = http.server.ThreadingHTTPServer((host, port), request_handler(handler, path))
    server.daemon_threads = True
    return server
