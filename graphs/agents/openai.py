"""Any OpenAI-compatible chat-completions endpoint as an agent runner (OpenAI, vLLM, Ollama, llama.cpp).

The request streams (server-sent events) so ``on_line`` sees the answer as it is written; a server that
answers with plain JSON instead is accepted too. The HTTP exchange runs on a worker thread while the
calling thread waits for it, so the overall timeout and a cancel take effect at once even when the
server has gone quiet. After a cancel or a timeout the worker stops at its next chunk, or when its own
read timeout expires, and its late answer is discarded.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
from django.conf import settings

from graphs.agents.base import AgentCall, AgentCancelled, AgentError, AgentResult, output_head, token_counts

_POLL_SECONDS = 0.05
_CONNECT_TIMEOUT = 10.0


class OpenAIRunner:
    name = "openai"

    def __init__(self, *, base_url: str, model: str, api_key: str = "") -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key

    def run(self, call: AgentCall) -> AgentResult:
        if call.cancelled():
            raise AgentCancelled()
        outcome: queue.Queue[AgentResult | BaseException] = queue.Queue(maxsize=1)
        stop = threading.Event()
        worker = threading.Thread(
            target=self._exchange_into, args=(call, stop, outcome), name="openai-request", daemon=True
        )
        worker.start()
        try:
            return _await(outcome, call, deadline=time.monotonic() + call.timeout)
        finally:
            stop.set()

    def _exchange_into(
        self, call: AgentCall, stop: threading.Event, outcome: queue.Queue[AgentResult | BaseException]
    ) -> None:
        try:
            outcome.put(self._exchange(call, stop))
        except Exception as exc:  # handed to the caller's thread, which raises it
            outcome.put(exc)

    def _exchange(self, call: AgentCall, stop: threading.Event) -> AgentResult:
        headers = {"Accept": "text/event-stream, application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        timeout = httpx.Timeout(call.timeout, connect=min(call.timeout, _CONNECT_TIMEOUT))
        try:
            with (
                httpx.Client(timeout=timeout) as client,
                client.stream("POST", self.url, json=self._body(call), headers=headers) as response,
            ):
                if response.status_code >= 400:
                    response.read()
                    raise _status_error(response)
                if response.headers.get("content-type", "").startswith("application/json"):
                    response.read()
                    if stop.is_set():
                        raise AgentCancelled()  # the caller has given up: its log must stay closed
                    return _from_json(response.text, call)
                return _from_stream(response.iter_lines(), call, stop)
        except httpx.TimeoutException as exc:
            raise AgentError(f"the endpoint did not answer in time: {exc}", kind="timeout") from None
        except httpx.DecodingError as exc:
            raise AgentError(
                f"the endpoint's answer could not be decoded: {exc}", kind="invalid_output"
            ) from None
        except httpx.TransportError as exc:
            raise AgentError(f"could not reach {self.url}: {exc}", kind="network") from None
        except ConnectionError as exc:
            # A reset, refused connection or broken pipe that reached us unwrapped (from the socket
            # under a stream being read): the network failed, not the endpoint's answer.
            raise AgentError(f"the connection to {self.url} failed: {exc}", kind="network") from None

    def _body(self, call: AgentCall) -> dict[str, Any]:
        # The agent's profile says who it is and, when it names one, which model answers.
        profile = call.agent_profile()
        return {
            "model": profile.model or self.model,
            "messages": [
                *([{"role": "system", "content": profile.instructions}] if profile.instructions.strip() else []),
                {"role": "user", "content": call.prompt},
            ],
            "stream": True,
            # Without it OpenAI never reports usage for a streamed answer; other servers ignore it.
            "stream_options": {"include_usage": True},
        }


def _await(
    outcome: queue.Queue[AgentResult | BaseException], call: AgentCall, deadline: float
) -> AgentResult:
    while True:
        if call.cancelled():
            raise AgentCancelled()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AgentError(f"the endpoint did not finish within {call.timeout:g} s", kind="timeout")
        try:
            item = outcome.get(timeout=min(_POLL_SECONDS, remaining))
        except queue.Empty:
            continue
        if isinstance(item, BaseException):
            raise item
        return item


def _status_error(response: httpx.Response) -> AgentError:
    status = response.status_code
    body = response.text
    kind = _status_kind(status, body)
    return AgentError(
        f"the endpoint answered {status}: {_error_message(body)}",
        kind=kind,
        status_code=status,
        stdout_head=output_head(body),
    )


def _status_kind(status: int, body: str) -> str:
    if status in (401, 403):
        return "auth"
    if status == 402 or (status == 429 and "insufficient_quota" in body):
        # OpenAI answers 429 both for "slow down" and for "the account is out of credit"; only the
        # first one goes away by waiting.
        return "quota"
    if status == 429:
        return "rate_limit"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "unavailable"
    return "bad_request"


def _error_message(body: str) -> str:
    try:
        error = json.loads(body).get("error")
    except (json.JSONDecodeError, AttributeError):
        error = None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return body.strip().splitlines()[0][:300] if body.strip() else "no details"


def _from_json(body: str, call: AgentCall) -> AgentResult:
    try:
        payload = json.loads(body)
        text = payload["choices"][0]["message"]["content"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        raise AgentError(
            "the endpoint's JSON is not a chat completion",
            kind="invalid_output",
            stdout_head=output_head(body),
        ) from None
    if not isinstance(text, str):
        raise AgentError(
            "the chat completion has no text content", kind="invalid_output", stdout_head=output_head(body)
        )
    for line in text.splitlines():
        call.emit(line)
    return _result(text, raw=payload, usage=payload.get("usage"), model=payload.get("model"))


def _from_stream(lines: Iterator[str], call: AgentCall, stop: threading.Event) -> AgentResult:
    pieces: list[str] = []
    pending = ""
    summary: dict[str, Any] = {"stream": True, "chunks": 0, "finish_reason": None, "usage": None}
    finished = False
    for line in lines:
        if stop.is_set():
            raise AgentCancelled()
        # Blank lines end an event; `event:`, `id:` and `:` comment lines carry nothing we use.
        if not line.startswith("data:"):
            continue
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            finished = True
            break
        delta = _chunk_text(data, summary)
        pieces.append(delta)
        pending += delta
        *complete, pending = pending.split("\n")
        for text_line in complete:
            call.emit(text_line)
    if not finished and summary["finish_reason"] is None:
        raise AgentError("the stream ended before the answer was complete", kind="invalid_output")
    if pending:
        call.emit(pending)
    return _result("".join(pieces), raw=summary, usage=summary["usage"], model=summary.get("model"))


def _result(text: str, *, raw: Any, usage: Any, model: Any) -> AgentResult:
    """The answer with its usage, and its cost from ``WORKGRAPH_MODEL_PRICES`` when the model is priced."""
    usage = usage if isinstance(usage, dict) else None
    model = model if isinstance(model, str) else None
    # One chat completion is one turn of the model: known, so never left to read as 0.
    return AgentResult(text=text, raw=raw, usage=usage, model=model, cost_usd=_cost_usd(model, usage), num_turns=1)


def _cost_usd(model: str | None, usage: dict | None) -> float | None:
    price = settings.WORKGRAPH_MODEL_PRICES.get(model) if model else None
    if price is None or usage is None:
        return None
    tokens = token_counts(usage)
    return (tokens["input_tokens"] * price[0] + tokens["output_tokens"] * price[1]) / 1_000_000


def _chunk_text(data: str, summary: dict[str, Any]) -> str:
    """Return the text one stream chunk adds, recording its id, model, finish reason and usage."""
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError:
        raise AgentError(
            "the stream carried a chunk that is not JSON",
            kind="invalid_output",
            stdout_head=output_head(data),
        ) from None
    if not isinstance(chunk, dict):
        raise AgentError("the stream carried a chunk that is not an object", kind="invalid_output")
    if "error" in chunk:
        # The request was accepted and the server failed while answering: treated like a 5xx.
        raise AgentError(
            f"the endpoint failed while streaming: {_error_message(data)}",
            kind="unavailable",
            stdout_head=output_head(data),
        )
    summary["chunks"] += 1
    for key in ("id", "model"):
        if chunk.get(key):
            summary[key] = chunk[key]
    if chunk.get("usage"):
        summary["usage"] = chunk["usage"]
    choices = chunk.get("choices") or []
    if not choices:
        return ""
    choice = choices[0]
    if not isinstance(choice, dict):
        raise AgentError("the stream carried a malformed choice", kind="invalid_output")
    if choice.get("finish_reason"):
        summary["finish_reason"] = choice["finish_reason"]
    content = (choice.get("delta") or {}).get("content")
    return content if isinstance(content, str) else ""
