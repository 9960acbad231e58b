"""The openai runner against a real local HTTP server standing in for an OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from graphs.agents import AgentCall, AgentCancelled, AgentError, OpenAIRunner, get_runner
from graphs.domain.prompts import agent_identity

ANSWER = "Hello world\nsecond line\nthird"
USAGE = {"prompt_tokens": 21, "completion_tokens": 9, "total_tokens": 30}


@dataclass
class Endpoint:
    """What the fake endpoint answers next, and every request it has received."""

    scenario: str = "stream"
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Scenarios that hang wait on this; teardown sets it so no server thread outlives the test.
    release: threading.Event = field(default_factory=threading.Event)
    base_url: str = ""


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model", **extra}
    body.setdefault("choices", [{"index": 0, "delta": delta or {}, "finish_reason": finish}])
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _stream_events() -> list[bytes]:
    return [
        b": keep-alive comment\n\n",
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "Hello"}),
        _chunk({"content": " world\nsecond"}),
        _chunk({"content": " line\nthird"}),
        _chunk(finish="stop"),
        _chunk(choices=[], usage=USAGE),
        b"data: [DONE]\n\n",
    ]


class _Handler(BaseHTTPRequestHandler):
    endpoint: Endpoint

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output clean."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.endpoint.requests.append(
            {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
        )
        _SCENARIOS[self.endpoint.scenario](self)

    def send_body(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, status: int, message: str, code: str) -> None:
        error = {"error": {"message": message, "type": code, "code": code}}
        self.send_body(status, "application/json", json.dumps(error).encode())

    def send_events(self, events: list[bytes], *, delay: float = 0.02, hang_after: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for index, event in enumerate(events):
            if index == hang_after:
                self.endpoint.release.wait(10)
                return
            self.wfile.write(event)
            self.wfile.flush()
            time.sleep(delay)


def _plain_json(handler: _Handler) -> None:
    completion = {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}
        ],
        "usage": USAGE,
    }
    handler.send_body(200, "application/json", json.dumps(completion).encode())


_SCENARIOS: dict[str, Callable[[_Handler], None]] = {
    "stream": lambda h: h.send_events(_stream_events()),
    "json": _plain_json,
    "rate_limit": lambda h: h.send_error_json(429, "Rate limit reached for requests", "rate_limit_exceeded"),
    "quota": lambda h: h.send_error_json(429, "You exceeded your current quota", "insufficient_quota"),
    "server_error": lambda h: h.send_error_json(500, "The server had an error", "server_error"),
    "unauthorized": lambda h: h.send_error_json(401, "Incorrect API key provided", "invalid_api_key"),
    "no_model": lambda h: h.send_error_json(404, "The model `x` does not exist", "model_not_found"),
    "bad_request": lambda h: h.send_error_json(400, "'messages' is required", "invalid_request_error"),
    "malformed_json": lambda h: h.send_body(200, "application/json", b'{"choices": [oops'),
    "malformed_stream": lambda h: h.send_events([b"data: {not json\n\n"]),
    "truncated_stream": lambda h: h.send_events(_stream_events()[:3]),
    "stream_error": lambda h: h.send_events(
        [_chunk({"content": "Hel"}), b'data: {"error": {"message": "model crashed"}}\n\n']
    ),
    "hang": lambda h: h.endpoint.release.wait(10),
    "hang_mid_stream": lambda h: h.send_events(_stream_events(), hang_after=4),
}


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()
    handler = type("Handler", (_Handler,), {"endpoint": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1/"
    yield state
    state.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """A proxy from the developer's environment must not intercept requests to 127.0.0.1."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def _runner(endpoint: Endpoint, api_key: str = "sk-test") -> OpenAIRunner:
    return OpenAIRunner(base_url=endpoint.base_url, model="test-model", api_key=api_key)


def _call(**overrides: Any) -> AgentCall:
    fields = {"org_node": "coder", "prompt": 'Plan {"goal": 1} {content}', "cwd": Path("."), "timeout": 5.0}
    return AgentCall(**(fields | overrides))


def test_it_posts_the_model_identity_and_prompt_with_the_bearer_key(endpoint):
    _runner(endpoint).run(_call())

    [request] = endpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["stream"] is True
    assert request["body"]["messages"] == [
        {"role": "system", "content": agent_identity("coder")},
        {"role": "user", "content": 'Plan {"goal": 1} {content}'},
    ]


def test_it_sends_no_authorization_header_without_a_key(endpoint):
    _runner(endpoint, api_key="").run(_call())

    assert "Authorization" not in endpoint.requests[0]["headers"]


def test_a_streamed_answer_is_joined_and_fed_line_by_line(endpoint):
    lines: list[str] = []

    result = _runner(endpoint).run(_call(on_line=lines.append))

    assert result.text == ANSWER
    assert lines == ["Hello world", "second line", "third"]
    assert result.usage == USAGE
    assert result.raw["finish_reason"] == "stop"
    assert result.raw["model"] == "test-model"


@pytest.mark.parametrize("scenario", ["stream", "json"])
def test_an_answer_is_one_turn_of_the_model(endpoint, scenario):
    endpoint.scenario = scenario

    assert _runner(endpoint).run(_call()).num_turns == 1


def test_a_plain_json_answer_is_accepted(endpoint):
    endpoint.scenario = "json"
    lines: list[str] = []

    result = _runner(endpoint).run(_call(on_line=lines.append))

    assert result.text == ANSWER
    assert result.usage == USAGE
    assert result.raw["id"] == "chatcmpl-2"
    assert lines == ["Hello world", "second line", "third"]


@pytest.mark.parametrize(
    ("scenario", "kind", "transient", "status"),
    [
        ("rate_limit", "rate_limit", True, 429),
        ("quota", "quota", False, 429),
        ("server_error", "unavailable", True, 500),
        ("unauthorized", "auth", False, 401),
        ("no_model", "not_found", False, 404),
        ("bad_request", "bad_request", False, 400),
    ],
)
def test_each_error_status_maps_to_its_kind(endpoint, scenario, kind, transient, status):
    endpoint.scenario = scenario

    with pytest.raises(AgentError) as caught:
        _runner(endpoint).run(_call())

    assert (caught.value.kind, caught.value.transient, caught.value.status_code) == (kind, transient, status)
    assert json.loads(caught.value.stdout_head)["error"]["code"]


def test_the_error_message_quotes_the_server(endpoint):
    endpoint.scenario = "unauthorized"

    with pytest.raises(AgentError, match="401: Incorrect API key provided"):
        _runner(endpoint).run(_call())


@pytest.mark.parametrize(
    ("scenario", "kind", "transient"),
    [
        ("malformed_json", "invalid_output", False),
        ("malformed_stream", "invalid_output", False),
        ("truncated_stream", "invalid_output", False),
        ("stream_error", "unavailable", True),
    ],
)
def test_a_malformed_answer_is_classified(endpoint, scenario, kind, transient):
    endpoint.scenario = scenario

    with pytest.raises(AgentError) as caught:
        _runner(endpoint).run(_call())

    assert (caught.value.kind, caught.value.transient) == (kind, transient)


@pytest.mark.parametrize("scenario", ["hang", "hang_mid_stream"])
def test_a_silent_server_times_out_quickly(endpoint, scenario):
    endpoint.scenario = scenario
    started = time.monotonic()

    with pytest.raises(AgentError) as caught:
        _runner(endpoint).run(_call(timeout=0.5))

    assert time.monotonic() - started < 15  # a missed timeout or cancel would wait for good, or for the 30 s timeout
    assert (caught.value.kind, caught.value.transient) == ("timeout", True)


def test_setting_the_cancel_event_stops_a_streaming_call(endpoint):
    endpoint.scenario = "hang_mid_stream"
    cancel = threading.Event()
    started = time.monotonic()

    with pytest.raises(AgentCancelled):
        _runner(endpoint).run(_call(timeout=30, on_line=lambda line: cancel.set(), cancel_event=cancel))

    assert time.monotonic() - started < 15  # a missed timeout or cancel would wait for good, or for the 30 s timeout


def test_an_unreachable_server_is_a_transient_network_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner = OpenAIRunner(base_url=f"http://127.0.0.1:{port}/v1", model="m")

    with pytest.raises(AgentError) as caught:
        runner.run(_call())

    assert (caught.value.kind, caught.value.transient) == ("network", True)


def test_get_runner_builds_the_openai_runner_from_settings(settings):
    settings.WORKGRAPH_OPENAI_BASE_URL = "http://llm.internal:8000/v1"
    settings.WORKGRAPH_OPENAI_MODEL = "qwen2.5-coder"
    settings.WORKGRAPH_OPENAI_API_KEY = "sk-local"

    runner = get_runner("openai")

    assert (runner.name, runner.url, runner.model, runner.api_key) == (
        "openai",
        "http://llm.internal:8000/v1/chat/completions",
        "qwen2.5-coder",
        "sk-local",
    )


def test_get_runner_refuses_openai_without_a_base_url(settings):
    settings.WORKGRAPH_OPENAI_BASE_URL = None

    with pytest.raises(ImproperlyConfigured, match="WORKGRAPH_OPENAI_BASE_URL"):
        get_runner("openai")
