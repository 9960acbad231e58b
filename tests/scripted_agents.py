"""A scripted stand-in for the agents (outside the product, so a double is fair) for engine tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from graphs.agents import AgentCall, AgentCancelled, AgentError, AgentResult

Reply = str | AgentError | Callable[[AgentCall], str]


@dataclass
class ScriptedRunner:
    """Answers by (purpose, node_id, attempt); falls back to ``(purpose, node_id)`` then a default.

    Every call is recorded in ``calls`` as ``(purpose, node_id, attempt)``.
    """

    replies: dict[tuple, Reply] = field(default_factory=dict)
    name: str = "scripted"
    calls: list[tuple[str, str, int]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, call: AgentCall) -> AgentResult:
        node_id = (call.node or {}).get("node_id", call.org_node)
        with self._lock:
            self.calls.append((call.purpose, node_id, call.attempt))
        reply = self.replies.get((call.purpose, node_id, call.attempt), self.replies.get((call.purpose, node_id)))
        if reply is None:
            reply = self.replies.get((call.purpose, call.org_node), _default(call))
        if isinstance(reply, AgentError):
            raise reply
        answer = reply(call) if callable(reply) else reply
        # A reply may be a whole result, to script what a call reports it used and cost.
        result = answer if isinstance(answer, AgentResult) else AgentResult(text=answer, raw={"scripted": True},
                                                                            usage=None)
        if call.on_line:
            for line in result.text.splitlines():
                call.on_line(line)
        return result

    def node_calls(self, purpose: str = "node") -> list[tuple[str, int]]:
        return [(node_id, attempt) for p, node_id, attempt in self.calls if p == purpose]


def _default(call: AgentCall) -> str:
    if call.purpose == "judge":
        return json.dumps({"ok": True, "issues": []})
    return f"output of {(call.node or {}).get('node_id')} attempt {call.attempt}"


def wait_for_cancel(call: AgentCall) -> str:
    """A reply that behaves like an agent working until it is stopped."""
    assert call.cancel_event is not None
    if call.cancel_event.wait(timeout=30):
        raise AgentCancelled()
    raise AssertionError("the agent was never cancelled")


def judge(ok: bool, *issues: str) -> str:
    return "Here is my review.\n```json\n" + json.dumps({"ok": ok, "issues": list(issues)}) + "\n```"
