"""Run-level events: node status changes, appended nodes, run status and progress.

The engine and the planner emit; listeners (the live publisher in ``console``) relay. Events are
delivered after the surrounding transaction commits, so a listener that reads the database in
response sees what the event announces.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)

RunEvent = dict[str, Any]
_listeners: list[Callable[[RunEvent], None]] = []


def run_event_listener_register(listener: Callable[[RunEvent], None]) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def run_event_emit(*, run_id: Any, event: str, **data: Any) -> None:
    payload: RunEvent = {"event": event, "run_id": str(run_id), **data}
    transaction.on_commit(lambda: _deliver(payload))


def node_states_emit(*, run_id: Any, rows: Iterable[Any]) -> None:
    """Announce the current status of some node attempts (model instances or ``values()`` dicts)."""
    nodes = [node_state(row) for row in rows]
    if nodes:
        run_event_emit(run_id=run_id, event="nodes", nodes=nodes)


def node_state(row: Any) -> dict[str, Any]:
    get = row.get if isinstance(row, dict) else lambda name: getattr(row, name, None)
    return {
        "node_exec_id": str(get("pk") or get("node_exec_id")),
        "node_id": get("node_id"),
        "attempt": get("attempt"),
        "status": get("status"),
        "cause": get("cause"),
    }


def _deliver(payload: RunEvent) -> None:
    for listener in list(_listeners):
        try:
            listener(payload)
        except Exception:
            # A live-update failure must never fail the work that caused it; pages resync on reconnect.
            logger.exception("run event listener failed for %s", payload.get("event"))
