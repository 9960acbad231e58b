"""A local stand-in of Anthropic's Messages API, written from its documentation, for the real Claude Code CLI.

``POST /v1/messages`` answers with what a script decides for each request: a streamed message (server-sent
events ``message_start``, ``ping``, then for each content block ``content_block_start`` / one or more
``content_block_delta`` (``text_delta`` or ``input_json_delta``) / ``content_block_stop``, then
``message_delta`` with the ``stop_reason`` and output usage, then ``message_stop``), the same message as one
JSON body when the request does not stream, or an error: ``{"type": "error", "error": {"type": ...,
"message": ...}}`` with its status (429 ``rate_limit_error`` with ``retry-after``, 401
``authentication_error``, 404 ``not_found_error``, 529 ``overloaded_error``).

A script is a function of the request (``Request``: its body, the text of its last user message, how many
answers of this conversation came before) to a ``Reply``; requests no script claims (the CLI's own
side calls at start-up, a subagent's turns the script does not name) get a short text answer.
``POST /v1/messages/count_tokens`` counts roughly, and ``GET /v1/models`` lists the one model, so nothing
the CLI asks at start-up fails. Every request is recorded for the test to read.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-standin-1"
# What one token costs is the CLI's business; the stand-in reports round counts so a test can name them.
INPUT_TOKENS = 100
OUTPUT_TOKENS = 20
_ids = itertools.count(1)


@dataclass(frozen=True)
class Block:
    """One content block of an answer: ``text``, or a ``tool_use`` of ``name`` with ``input``."""

    type: str
    text: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """What the stand-in answers: a message of ``blocks``, or an error when ``status`` is not 200."""

    blocks: tuple[Block, ...] = ()
    status: int = 200
    error_type: str = ""
    message: str = ""
    retry_after: int | None = None

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(block.type == "tool_use" for block in self.blocks) else "end_turn"


def text(words: str) -> Reply:
    return Reply(blocks=(Block("text", text=words),))


def tool(name: str, arguments: dict[str, Any], *, saying: str = "") -> Reply:
    """A turn that calls the tool ``name`` (a text block first when ``saying``)."""
    blocks = (Block("text", text=saying),) if saying else ()
    return Reply(blocks=(*blocks, Block("tool_use", name=name, input=arguments)))


def error(status: int, error_type: str, message: str, *, retry_after: int | None = None) -> Reply:
    return Reply(status=status, error_type=error_type, message=message, retry_after=retry_after)


@dataclass(frozen=True)
class Request:
    """One ``POST /v1/messages`` as a script reads it."""

    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def last_user_text(self) -> str:
        """The text of the last user message (its tool results included, as text)."""
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    @property
    def first_user_text(self) -> str:
        """The text of the conversation's first user message: the prompt the CLI was given."""
        for message in self.body.get("messages", []):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    @property
    def turn(self) -> int:
        """How many assistant answers of this conversation came before this request (0: its first)."""
        return sum(1 for message in self.body.get("messages", []) if message.get("role") == "assistant")

    @property
    def tool_names(self) -> set[str]:
        return {str(entry.get("name")) for entry in self.body.get("tools", []) if isinstance(entry, dict)}


Script = Callable[[Request], "Reply | None"]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_text_of(block.get("content")))
    return "\n".join(parts)


class AnthropicStandIn:
    """The stand-in server on 127.0.0.1, on a port of its own, until ``close()``."""

    def __init__(self) -> None:
        self.script: Script = lambda _request: None
        self.requests: list[Request] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="anthropic-standin", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply_to(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
        try:
            return self.script(request) or text("ok")
        except Exception as failure:
            return error(500, "api_error", f"the stand-in's script failed: {failure!r}")

    def scripted(self, marker: str) -> list[Request]:
        """The recorded requests whose prompt holds ``marker``."""
        with self._lock:
            return [request for request in self.requests if marker in request.first_user_text]


def _handler(standin: AnthropicStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test's output is the CLI's, not an access log

        def do_GET(self) -> None:
            standin.paths.append(self.path)
            if self.path.split("?")[0].rstrip("/") == "/v1/models":
                self._json(200, {"data": [{"type": "model", "id": MODEL, "display_name": "Stand-in",
                                           "created_at": "2026-01-01T00:00:00Z"}],
                                 "has_more": False, "first_id": MODEL, "last_id": MODEL})
            else:
                self._error(404, "not_found_error", f"no such route: GET {self.path}")

        def do_HEAD(self) -> None:
            standin.paths.append(self.path)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            standin.paths.append(self.path)
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._error(400, "invalid_request_error", "the body is not JSON")
                return
            route = self.path.split("?")[0].rstrip("/")
            if route == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
            elif route == "/v1/messages":
                reply = standin.reply_to(Request(body=body, headers={k.lower(): v for k, v in self.headers.items()}))
                self._answer(body, reply)
            else:
                self._error(404, "not_found_error", f"no such route: POST {self.path}")

        def _answer(self, body: dict[str, Any], reply: Reply) -> None:
            if reply.status != 200:
                self._error(reply.status, reply.error_type, reply.message, retry_after=reply.retry_after)
            elif body.get("stream"):
                self._stream(body, reply)
            else:
                self._json(200, _message(body, reply, content=[_block_json(block) for block in reply.blocks],
                                         stop_reason=reply.stop_reason, output_tokens=OUTPUT_TOKENS))

        def _stream(self, body: dict[str, Any], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", f"req_standin_{next(_ids)}")
            self.send_header("connection", "close")
            self.end_headers()
            self._event("message_start", {"type": "message_start",
                                          "message": _message(body, reply, content=[], stop_reason=None,
                                                              output_tokens=1)})
            self._event("ping", {"type": "ping"})
            for index, block in enumerate(reply.blocks):
                start = {"type": "text", "text": ""} if block.type == "text" else {
                    "type": "tool_use", "id": f"toolu_standin_{next(_ids)}", "name": block.name, "input": {}}
                self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                    "content_block": start})
                for delta in _deltas(block):
                    self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                        "delta": delta})
                self._event("content_block_stop", {"type": "content_block_stop", "index": index})
            self._event("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                                          "usage": {"output_tokens": OUTPUT_TOKENS}})
            self._event("message_stop", {"type": "message_stop"})
            self.close_connection = True

        def _event(self, name: str, data: dict[str, Any]) -> None:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        def _json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.send_header("request-id", f"req_standin_{next(_ids)}")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)

        def _error(self, status: int, error_type: str, message: str, *, retry_after: int | None = None) -> None:
            headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
            self._json(status, {"type": "error", "error": {"type": error_type, "message": message}}, headers)

    return Handler


def _message(body: dict[str, Any], reply: Reply, *, content: list[dict[str, Any]], stop_reason: str | None,
             output_tokens: int) -> dict[str, Any]:
    return {"id": f"msg_standin_{next(_ids)}", "type": "message", "role": "assistant", "content": content,
            "model": body.get("model") or MODEL, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": output_tokens,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def _block_json(block: Block) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": f"toolu_standin_{next(_ids)}", "name": block.name, "input": block.input}


def _deltas(block: Block) -> list[dict[str, Any]]:
    """The block's content in two pieces, as the API streams it in several."""
    if block.type == "text":
        half = len(block.text) // 2
        return [{"type": "text_delta", "text": piece} for piece in (block.text[:half], block.text[half:]) if piece]
    raw = json.dumps(block.input)
    half = len(raw) // 2
    return [{"type": "input_json_delta", "partial_json": piece} for piece in (raw[:half], raw[half:])]
