"""Bare repositories served over HTTP by git's own ``git http-backend`` (Debian's git package ships it), behind a
small local server that asks for basic auth: the delivery tests push over the loopback for real.

The server runs the CGI program once a request, as git-http-backend(1) has a web server do: the smart HTTP
protocol's ``info/refs``, ``git-upload-pack`` and ``git-receive-pack`` under ``GIT_PROJECT_ROOT``, with
``REMOTE_USER`` the authenticated user (which lets it receive pushes). A request without the password gets
401 and ``WWW-Authenticate: Basic``, which is when git asks its askpass program for credentials. Every
request's method, path and user are kept in ``requests``.

Under ``CI=true`` a machine without git-http-backend fails the test; elsewhere it is skipped.
"""

from __future__ import annotations

import base64
import os
import subprocess
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.local_http import LocalHttpServer, QuietHandler

HTTP_BACKEND = Path("/usr/lib/git-core/git-http-backend")
IN_CI = os.environ.get("CI", "").lower() == "true"


def http_backend_required() -> None:
    """Skip the test (fail it under CI) where Debian's git-http-backend is not installed."""
    if not HTTP_BACKEND.exists():
        message = f"{HTTP_BACKEND} is missing: apt-get install git"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@dataclass
class GitHttpServer(LocalHttpServer):
    """Serves the bare repositories under ``root`` at ``url_of(name)``, to ``user`` with ``password``."""

    root: Path
    password: str
    user: str = "workgraph"
    requests: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._listen(_handler(self), "git-http")

    def url_of(self, name: str) -> str:
        return f"{self.host}/{name}"


def bare_repository(root: Path, name: str) -> Path:
    """A new, empty bare repository ``root/name`` that takes pushes."""
    path = root / name
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(path)], check=True)
    return path


def _handler(served: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _serve(self) -> None:
            body = self._body()
            user = self._authenticated()
            served.requests.append((self.command, self.path, user or ""))
            if user is None:
                self._send(401, [("WWW-Authenticate", 'Basic realm="git"')], b"")
                return
            path, _, query = self.path.partition("?")
            env = {
                "PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(served.root), "GIT_HTTP_EXPORT_ALL": "1",
                "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(served.root), "PATH_INFO": path, "QUERY_STRING": query,
                "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)), "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                "REMOTE_USER": user, "REMOTE_ADDR": "127.0.0.1", "GATEWAY_INTERFACE": "CGI/1.1",
                "SERVER_PROTOCOL": "HTTP/1.1", "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            }
            done = subprocess.run([str(HTTP_BACKEND)], input=body, env=env, capture_output=True, timeout=60)
            head, _, content = done.stdout.partition(b"\r\n\r\n")
            if not _:
                head, _, content = done.stdout.partition(b"\n\n")
            status, headers = 200, []
            for line in head.decode("latin-1").splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self._send(status, headers, content)

        def _authenticated(self) -> str | None:
            scheme, _, encoded = (self.headers.get("Authorization") or "").partition(" ")
            if scheme.lower() != "basic":
                return None
            user, _, password = base64.b64decode(encoded).decode("utf-8", "replace").partition(":")
            return user if password == served.password and user else None

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _send(self, status: int, headers: list[tuple[str, str]], content: bytes) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() not in ("content-length", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    return Handler
