"""An HTTP proxy that loses the answer to the first request it relays: the
request reaches the marketplace, the caller's connection is closed unanswered."""

import http.client
import http.server
import threading
import urllib.parse


def start(target: str) -> tuple[str, http.server.ThreadingHTTPServer]:
    """The proxy's URL, and its server (shutdown() when done)."""
    host = urllib.parse.urlsplit(target).netloc
    state = {"dropped": False}
    lock = threading.Lock()

    def forward(method, path, headers, body):
        conn = http.client.HTTPConnection(host, timeout=60)
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        out = resp.status, resp.getheaders(), resp.read()
        conn.close()
        return out

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_one(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            with lock:
                drop, state["dropped"] = not state["dropped"], True
            if drop:
                # The marketplace gets the request; its answer is lost.
                threading.Thread(target=forward, args=(self.command, self.path, headers, body), daemon=True).start()
                self.close_connection = True
                return
            status, resp_headers, out = forward(self.command, self.path, headers, body)
            self.send_response(status)
            for k, v in resp_headers:
                if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_POST = handle_one

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server
