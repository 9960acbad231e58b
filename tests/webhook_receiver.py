"""A local HTTP receiver for webhook deliveries: a small threaded server that records every request and
answers each from a script (a status code, or a pause longer than the console waits), then 200.

Under ``CI=true`` a receiver that cannot start fails the test; elsewhere it is skipped.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"
# An answer of the script: a status code, or ("sleep", seconds) before a 200 the console no longer waits for.
Answer = int | tuple[str, float]


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    script: list[Answer] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self) -> Answer:
        with self.lock:
            return self.script.pop(0) if self.script else 200

    def wait_for(self, count: int, *, timeout: float = 10.0) -> list[Received]:
        """The requests received once there are ``count`` of them (fails the test past ``timeout``)."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            if time.monotonic() > deadline:
                pytest.fail(f"the receiver got {len(self.requests)} requests, not {count}, in {timeout} s")
            time.sleep(0.02)
        return list(self.requests)


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.requests.append(Received(path=self.path, headers={k.lower(): v for k, v in self.headers.items()},
                                              body=body))
            answer = receiver.answer()
            if isinstance(answer, tuple):
                time.sleep(answer[1])
                answer = 200
            if answer in (301, 302, 307, 308):
                self.send_response(answer)
                self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.end_headers()
                return
            self.send_response(answer)
            self.end_headers()
            self.wfile.write(b"x" * 2000 if answer >= 500 else b"ok")

        def log_message(self, *args) -> None:
            pass

    return Handler


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    receiver = Receiver(url="")
    try:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    except OSError as error:
        if IN_CI:
            pytest.fail(f"CI=true needs the webhook receiver, which could not start: {error}")
        pytest.skip(f"the webhook receiver could not start: {error}")
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/workgraph?x=1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
