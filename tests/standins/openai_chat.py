"""A local stand-in of OpenAI's Chat Completions API, for tests that run the openai runner through a console.

Written from OpenAI's API reference ("Create chat completion", ``POST /v1/chat/completions``, and "The chat
completion chunk object"): with ``"stream": true`` the answer is ``text/event-stream``, ``data: <json>``
lines each holding a ``chat.completion.chunk`` (``id``, ``object``, ``created``, ``model``, ``choices``
[{``index``, ``delta``, ``finish_reason``}]): the role first, the text in pieces, then the
``finish_reason``; with ``stream_options.include_usage`` a last chunk with empty ``choices`` and the
``usage`` (``prompt_tokens``, ``completion_tokens``, ``total_tokens``); then ``data: [DONE]``. Without
``stream`` it is one ``chat.completion`` object.

Each request is answered by the ``script``: a function of the request's JSON body to the answer's text.
Every body is kept in ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT_TOKENS = 50
COMPLETION_TOKENS = 10

Script = Callable[[dict[str, Any]], str]


class ChatStandin:
    """The stand-in server on 127.0.0.1, on a port of its own, from ``with`` to its end."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="chat-standin", daemon=True)

    @property
    def base_url(self) -> str:
        """The API's base URL, as ``WORKGRAPH_OPENAI_BASE_URL`` takes it (the ``/v1`` included)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ChatStandin:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def user_text(body: dict[str, Any]) -> str:
    """The text of a request's user messages, joined."""
    return "\n".join(str(message.get("content", "")) for message in body.get("messages") or []
                     if isinstance(message, dict) and message.get("role") == "user")


def _handler(standin: ChatStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass  # the test reads ``requests``; stderr stays quiet

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            if self.path.split("?")[0] != "/v1/chat/completions":
                self._send(404, "application/json", json.dumps(
                    {"error": {"message": f"no route {self.path}", "type": "invalid_request_error",
                               "param": None, "code": "not_found"}}).encode())
                return
            standin.requests.append(body)
            text = standin.script(body)
            model = body.get("model") or "gpt-4o-mini"
            usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                     "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}
            if not body.get("stream"):
                completion = {"id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
                              "model": model, "usage": usage,
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                           "finish_reason": "stop"}]}
                self._send(200, "application/json", json.dumps(completion).encode())
                return
            chunks = [_chunk(model, {"role": "assistant", "content": ""}),
                      *(_chunk(model, {"content": text[start:start + 32]}) for start in range(0, len(text), 32)),
                      _chunk(model, {}, finish="stop")]
            if (body.get("stream_options") or {}).get("include_usage"):
                chunks.append({**_chunk(model, {}), "choices": [], "usage": usage})
            events = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
            self._send(200, "text/event-stream", events + b"data: [DONE]\n\n")

        def _send(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _chunk(model: str, delta: dict[str, Any], *, finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
