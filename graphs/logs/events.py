"""Run-level events: node status changes, appended nodes, run status and progress.

The engine and the planner emit; listeners (the live publisher in ``console``) relay. Events are
delivered after the surrounding transaction commits, so a listener that reads the database in
response sees what the event announces.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from graphs.agents.base import TOKEN_FIELDS
from graphs.domain.attempt_words import attempt_tool_failures

logger = logging.getLogger(__name__)

RunEvent = dict[str, Any]
_listeners: list[Callable[[RunEvent], None]] = []


def run_event_listener_register(listener: Callable[[RunEvent], None]) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


@dataclass(eq=False)
class _Delivery:
    """An event to deliver once the transaction that emitted it commits."""

    payload: RunEvent

    def __call__(self) -> None:
        _deliver(self.payload)


def run_event_emit(*, run_id: Any, event: str, **data: Any) -> None:
    transaction.on_commit(_Delivery({"event": event, "run_id": str(run_id), **data}))


def node_states_emit(*, run_id: Any, rows: Iterable[Any]) -> None:
    """Announce the current status of some node attempts (model instances or ``values()`` dicts).

    In a transaction whose last run event to deliver is already the same run's node statuses, from
    the same savepoint, these join it: one event for a chain node's end and its dependant's claim, as
    they commit together, and in the order they were emitted. Run events keep their order; what else
    waits for the commit (a log's lines told to their watchers) is for other listeners."""
    nodes = [node_state(row) for row in rows]
    if not nodes:
        return
    last = _last_delivery()
    if last is not None and last.payload["event"] == "nodes" and last.payload["run_id"] == str(run_id):
        last.payload["nodes"].extend(nodes)
        return
    run_event_emit(run_id=run_id, event="nodes", nodes=nodes)


def _last_delivery() -> _Delivery | None:
    """The run event this transaction delivers last once it commits, if it was emitted in the savepoint
    now open (a savepoint rolled back takes its events with it: none may join one from outside it)."""
    if not connection.in_atomic_block:
        return None
    for savepoints, hook, _ in reversed(connection.run_on_commit):
        if isinstance(hook, _Delivery):
            return hook if savepoints == set(connection.savepoint_ids) else None
    return None


def node_state(row: Any) -> dict[str, Any]:
    """An attempt's status for listeners; with what its agent calls cost, and its failed tool calls when
    any failed (as graph.json's attempts carry them), once it has ended (an attempt model instance knows,
    a ``values()`` dict of a waiting attempt does not)."""
    get = row.get if isinstance(row, dict) else lambda name: getattr(row, name, None)
    state = {
        "node_exec_id": str(get("pk") or get("node_exec_id")),
        "node_id": get("node_id"),
        "attempt": get("attempt"),
        "status": get("status"),
        "cause": get("cause"),
    }
    if not isinstance(row, dict) and get("finished_at") is not None:
        cost = get("cost_usd")
        state["cost_usd"] = float(cost) if cost is not None else None
        state["agent_calls"] = get("agent_calls") or 0
        state["calls_without_usage"] = get("calls_without_usage") or 0
        state["calls_without_cost"] = get("calls_without_cost") or 0
        state["tokens"] = token_total({**state, **{name: get(name) for name in TOKEN_FIELDS}})
        failed_tools = attempt_tool_failures(count=get("tool_failures") or 0, first=get("tool_failure_first") or "")
        if failed_tools is not None:
            state["tool_failures"] = failed_tools
    return state


def token_total(row: dict[str, Any]) -> int | None:
    """An attempt's four token counts summed; None when they are unknown (it made calls and none of them
    reported usage)."""
    calls = row.get("agent_calls") or 0
    if calls and (row.get("calls_without_usage") or 0) >= calls:
        return None
    return sum(row.get(name) or 0 for name in TOKEN_FIELDS)


def _deliver(payload: RunEvent) -> None:
    for listener in list(_listeners):
        try:
            listener(payload)
        except Exception:
            # A live-update failure must never fail the work that caused it; pages resync on reconnect.
            logger.exception("run event listener failed for %s", payload.get("event"))
