"""A local stand-in of OpenAI's Responses API, for tests that drive the real Codex CLI.

Written from OpenAI's API reference ("Create a model response", ``POST /v1/responses``, and "Streaming
events"): with ``"stream": true`` the answer is ``text/event-stream``, one server-sent event per
``event: <type>`` / ``data: <json>`` pair, each JSON object carrying its own ``type`` and a rising
``sequence_number``:

- ``response.created`` and ``response.in_progress`` with the response object (``id``, ``object``
  ``"response"``, ``created_at``, ``status`` ``in_progress``, ``model``, ``output`` [], ``usage`` null);
- per output item, ``response.output_item.added`` (``output_index``, the ``item`` in progress), then
  for a ``message`` item ``response.content_part.added``, ``response.output_text.delta`` (``item_id``,
  ``output_index``, ``content_index``, ``delta``), ``response.output_text.done`` (``text``) and
  ``response.content_part.done``; for a ``function_call`` item (``id``, ``call_id``, ``name``,
  ``arguments``) ``response.function_call_arguments.delta`` and ``.done``; then
  ``response.output_item.done`` with the whole item;
- ``response.completed`` with the finished response, its ``output`` and its ``usage``
  (``input_tokens``, ``input_tokens_details.cached_tokens``, ``output_tokens``,
  ``output_tokens_details.reasoning_tokens``, ``total_tokens``);
- a failure while answering is ``response.failed`` (the response with ``status`` ``failed`` and its
  ``error`` {``code``, ``message``}); a refused request is an HTTP status with the API's error body
  ``{"error": {"message", "type", "param", "code"}}`` (401 ``invalid_api_key``, 429
  ``rate_limit_exceeded`` with ``retry-after``).

Each request is answered by the ``script``: a function of the request's JSON body and its index
(counting from 0) that returns a ``Turn``. Every request is kept in ``requests`` (its path, headers
and body), so a test can check what the CLI sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Turn:
    """One answer: the output items to stream (``("message", text)`` or ``("function_call", name,
    arguments)``) with their usage, or an HTTP ``status`` with an error ``code`` and ``message``, or
    a stream that ends in ``response.failed`` (``failed`` set)."""

    items: tuple[tuple[str, ...], ...] = ()
    input_tokens: int = 100
    output_tokens: int = 20
    cached_tokens: int = 0
    status: int = 200
    code: str = ""
    message: str = ""
    failed: bool = False


def message(text: str, **usage: int) -> Turn:
    return Turn(items=(("message", text),), **usage)


def function_call(name: str, arguments: dict[str, Any], **usage: int) -> Turn:
    return Turn(items=(("function_call", name, json.dumps(arguments)),), **usage)


def http_error(status: int, code: str, text: str) -> Turn:
    return Turn(status=status, code=code, message=text)


Script = Callable[[dict[str, Any], int], Turn]


@dataclass
class ResponsesStandin:
    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="responses-standin", daemon=True)

    @property
    def base_url(self) -> str:
        """The API's base URL, as ``OPENAI_BASE_URL`` takes it (the ``/v1`` included)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ResponsesStandin:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Turn:
        with self._lock:
            index = sum(1 for seen in self.requests if seen["path"] == path)
            self.requests.append({"path": path, "headers": headers, "body": body})
        return self.script(body, index)

    def responses(self) -> list[dict[str, Any]]:
        """The bodies of the ``POST /v1/responses`` requests received so far."""
        with self._lock:
            return [seen["body"] for seen in self.requests if seen["path"] == "/v1/responses"]


def user_text(body: dict[str, Any]) -> str:
    """The text of every user message of a request, joined: where a script finds what it is asked."""
    parts = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [str(part.get("text", "")) for part in content if isinstance(part, dict)]
    return "\n".join(parts)


def tool_outputs(body: dict[str, Any]) -> list[str]:
    """The ``function_call_output`` items of a request: what the CLI's tools answered."""
    return [str(item.get("output")) for item in body.get("input") or []
            if isinstance(item, dict) and item.get("type") == "function_call_output"]


def _handler(standin: ResponsesStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass  # the test reads ``requests``; stderr stays quiet

        def do_GET(self) -> None:
            standin.requests.append({"path": self.path, "headers": dict(self.headers), "body": None})
            self._json(404, _error_body("not_found", f"no route {self.path}", "invalid_request_error"))

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(400, _error_body("invalid_json", "the body is not JSON", "invalid_request_error"))
                return
            if self.path.split("?")[0] != "/v1/responses":
                standin.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                self._json(404, _error_body("not_found", f"no route {self.path}", "invalid_request_error"))
                return
            turn = standin.answer("/v1/responses", dict(self.headers), body)
            if turn.status != 200:
                kind = "invalid_request_error" if turn.status in (401, 403) else "requests"
                self._json(turn.status, _error_body(turn.code, turn.message, kind),
                           extra={"retry-after": "0"} if turn.status == 429 else {})
                return
            self._stream(body, turn)

        def _json(self, status: int, payload: dict[str, Any], *, extra: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any], turn: Turn) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for event in _events(body, turn):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()

    return Handler


def _error_body(code: str, text: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


def _events(body: dict[str, Any], turn: Turn) -> list[dict[str, Any]]:
    """The server-sent events of one streamed answer, in the documented order."""
    response_id = f"resp_{time.monotonic_ns():x}"
    response = {"id": response_id, "object": "response", "created_at": int(time.time()), "status": "in_progress",
                "model": body.get("model") or "gpt-5", "output": [], "usage": None, "error": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": dict(response)},
                                    {"type": "response.in_progress", "response": dict(response)}]
    if turn.failed:
        failed = {**response, "status": "failed", "error": {"code": turn.code, "message": turn.message}}
        events.append({"type": "response.failed", "response": failed})
        return _numbered(events)
    output = []
    for index, spec in enumerate(turn.items):
        item_events, item = (_message_events if spec[0] == "message" else _call_events)(index, spec, response_id)
        events += item_events
        output.append(item)
    usage = {"input_tokens": turn.input_tokens, "input_tokens_details": {"cached_tokens": turn.cached_tokens},
             "output_tokens": turn.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": turn.input_tokens + turn.output_tokens}
    events.append({"type": "response.completed",
                   "response": {**response, "status": "completed", "output": output, "usage": usage}})
    return _numbered(events)


def _message_events(index: int, spec: tuple[str, ...], response_id: str) -> tuple[list[dict], dict]:
    text = spec[1]
    item_id = f"msg_{response_id}_{index}"
    part = {"type": "output_text", "text": "", "annotations": []}
    started = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    done = {**started, "status": "completed", "content": [{**part, "text": text}]}
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    # The text arrives in pieces, as a model writes it.
    deltas = [text[start:start + 16] for start in range(0, len(text), 16)] or [""]
    return [
        {"type": "response.output_item.added", "output_index": index, "item": started},
        {"type": "response.content_part.added", **where, "part": part},
        *({"type": "response.output_text.delta", **where, "delta": delta} for delta in deltas),
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": {**part, "text": text}},
        {"type": "response.output_item.done", "output_index": index, "item": done},
    ], done


def _call_events(index: int, spec: tuple[str, ...], response_id: str) -> tuple[list[dict], dict]:
    _, name, arguments = spec
    item_id = f"fc_{response_id}_{index}"
    started = {"id": item_id, "type": "function_call", "status": "in_progress", "call_id": f"call_{item_id}",
               "name": name, "arguments": ""}
    done = {**started, "status": "completed", "arguments": arguments}
    where = {"item_id": item_id, "output_index": index}
    return [
        {"type": "response.output_item.added", "output_index": index, "item": started},
        {"type": "response.function_call_arguments.delta", **where, "delta": arguments},
        {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
        {"type": "response.output_item.done", "output_index": index, "item": done},
    ], done


def _numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]
