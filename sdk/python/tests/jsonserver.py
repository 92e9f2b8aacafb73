"""A JSON server on 127.0.0.1, for tests that play a marketplace or a Solana RPC node."""

import http.server
import json
import threading


def serve(answer):
    """Serves answer(method, body bytes) -> a JSON value for every GET and POST;
    returns the server (shut it down when done) and its URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self):
            body = json.dumps(answer(self.command, self.rfile.read(int(self.headers.get("Content-Length") or 0)))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
