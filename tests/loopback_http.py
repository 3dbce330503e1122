"""What the tests' loopback servers (loopback_import, loopback_scholarly, test_zotero_note's)
share: an HTTP server on a free 127.0.0.1 port, served from a daemon thread, quiet about its
requests and about clients that leave early; its `url`, and `close()`, also on leaving a `with`."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that timed out and left: a broken pipe, not a test failure


class LoopbackHTTP:
    """Serves `handler` (a BaseHTTPRequestHandler class) until closed."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.httpd = _QuietServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
