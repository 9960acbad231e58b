"""What the tests' local HTTP servers share: a threaded server on 127.0.0.1 at a free port, serving from
entering its ``with`` to leaving it, whose handler logs nothing and answers GET and POST alike."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test's output clean and hands GET and POST to ``_serve``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        raise NotImplementedError


class LocalHttpServer:
    """A server that ``_listen`` sets up: its ``host``, and its thread started by ``with`` and stopped after."""

    def _listen(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)

    @property
    def host(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
