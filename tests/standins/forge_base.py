"""What the forges' stand-ins share: a threaded HTTP server on 127.0.0.1 that routes each request by method and
path pattern to its forge's handler, keeps every request, and answers JSON.

A stand-in checks what its API's description requires of a request (authentication, headers, the body's
fields) and answers as the API documents, error codes and shapes included; whatever a request got wrong is
also kept in ``violations``, which a test asserts empty, so a client that strays fails the test even where
the answer would not show it. With ``remote`` (a bare repository), a pull request's head must be a branch
that was pushed there, and its head commit is that branch's. ``outage`` makes it answer every request alike
(a 503, say), as a forge that is down does.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.local_http import LocalHttpServer, QuietHandler

Answer = tuple[int, Any]


class PlainText(str):
    """An answer the API documents as plain text (a job's log), sent as it is rather than as JSON."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass
class ForgeStandin(LocalHttpServer):
    """One forge's API; subclasses set ``prefix`` (the API's base path), ``routes`` and ``authenticated``."""

    token: str
    remote: Path | None = None
    requests: list[Request] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    # While set, every request is answered this (status, JSON body): the forge down, or refusing everything.
    outage: Answer | None = None
    prefix = ""

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self._listen(_handler(self), "forge-standin")

    @property
    def api_url(self) -> str:
        return self.host + self.prefix

    def routes(self) -> list[tuple[str, str, Callable[..., Answer]]]:
        """(method, path pattern after ``prefix``, handler(request, **groups)) triples."""
        raise NotImplementedError

    def authenticated(self, request: Request) -> Answer | None:
        """The answer to a request whose credentials or headers are wrong; None when they are right."""
        raise NotImplementedError

    def violation(self, what: str) -> None:
        self.violations.append(what)

    def branch_head(self, branch: str) -> str | None:
        """The commit ``branch`` points at in ``remote``; None when it was never pushed (or no remote is set)."""
        if self.remote is None:
            return None
        done = subprocess.run(["git", "--git-dir", str(self.remote), "rev-parse", "--verify", "--quiet",
                               f"refs/heads/{branch}"], capture_output=True, text=True)
        return done.stdout.strip() or None

    def requested(self, method: str, pattern: str) -> list[Request]:
        return [request for request in self.requests
                if request.method == method and re.fullmatch(pattern, request.path)]

    def answer(self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes) -> tuple[int, Any]:
        parts = urlsplit(raw_path)
        body = None
        if raw_body:
            try:
                body = json.loads(raw_body)
            except ValueError:
                self.violation(f"{method} {parts.path}: the body is not JSON")
                return 400, json.dumps({"message": "Problems parsing JSON"}).encode()
        request = Request(method=method, path=parts.path, query={k: v[-1] for k, v in parse_qs(parts.query).items()},
                          headers={k.lower(): v for k, v in headers.items()}, body=body)
        with self.lock:
            self.requests.append(request)
            if self.outage is not None:
                return self.outage[0], json.dumps(self.outage[1]).encode()
            refused = self.authenticated(request)
            if refused is not None:
                return refused[0], json.dumps(refused[1]).encode()
            path = request.path.removeprefix(self.prefix) if request.path.startswith(self.prefix) else None
            for route_method, pattern, handler in self.routes():
                found = re.fullmatch(pattern, path or "")
                if route_method == method and found:
                    status, content = handler(request, **{k: unquote(v) for k, v in found.groupdict().items()})
                    return status, content if isinstance(content, PlainText) else json.dumps(content).encode()
        self.violation(f"{method} {request.path}: no such operation in the API's description")
        return 404, json.dumps({"message": "Not Found"}).encode()


def _handler(standin: ForgeStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, content = standin.answer(self.command, self.path, dict(self.headers.items()), raw)
            kind = "text/plain" if isinstance(content, PlainText) else "application/json"
            content = content.encode() if isinstance(content, PlainText) else content
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    return Handler
