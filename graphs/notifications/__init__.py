"""Notifications: the one hook the engine calls where something happens that people outside the console
want to hear of, and the listeners that pass it on (webhooks, email, the inbox).

``notify`` is called inside the transaction that made the change; its listeners hear of it once that
transaction commits, so a rolled-back change is never announced. A listener that fails is logged and
never breaks the run that announced the event. The package's modules:

- ``setup`` — installs the jobs and the listener below in a process (``GraphsConfig.ready``);
- ``fanout`` — a committed notification to a delivery per webhook and a notice per email recipient;
- ``payloads`` — the JSON payload, the Slack message, an email's words;
- ``signing`` — Standard Webhooks secrets and signatures;
- ``addresses`` — the URL check: loopback, link-local and private addresses refused, resolved once;
- ``delivery`` — one try of a delivery, its retries with backoff;
- ``email`` — mailing a recipient's notices, one per event or batched per minute;
- ``webhooks`` — registering webhooks, redelivering, members' email choices;
- ``jobs`` — the jobs' names and their submitters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

logger = logging.getLogger(__name__)

RUN_SUCCEEDED = "run.succeeded"
RUN_FAILED = "run.failed"
RUN_CANCELLED = "run.cancelled"
RUN_REJECTED = "run.rejected"
APPROVAL_WAITING = "approval.waiting"
BUDGET_EXCEEDED = "budget.exceeded"
EXTERNAL_WAITING = "external.waiting"
NODE_FAILED = "node.failed"
# An attempt's change waits for a reviewer (its project requires change review).
REVIEW_WAITING = "review.waiting"
# A run's branch reached its project's remote (and its pull request opened), or its delivery failed for good.
RUN_DELIVERED = "run.delivered"
DELIVERY_FAILED = "delivery.failed"
# Every event, in the order the pages list them.
EVENTS = (RUN_SUCCEEDED, RUN_FAILED, RUN_CANCELLED, RUN_REJECTED, APPROVAL_WAITING, BUDGET_EXCEEDED,
          EXTERNAL_WAITING, NODE_FAILED, REVIEW_WAITING, RUN_DELIVERED, DELIVERY_FAILED)
# The event a run's new status announces; a status not named here announces nothing.
_EVENT_OF_RUN_STATUS = {
    "succeeded": RUN_SUCCEEDED,
    "failed": RUN_FAILED,
    "cancelled": RUN_CANCELLED,
    "rejected": RUN_REJECTED,
    "awaiting_approval": APPROVAL_WAITING,
}


@dataclass(frozen=True)
class Notification:
    """One event as its listeners hear it: what happened, to which run, when, and its facts (JSON-ready)."""

    event: str
    run_id: str
    at: datetime
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """What tells this event from another: an event that happens once per run (or per node attempt)
        has one key however often it is announced; a run may wait for approval several times."""
        parts = [self.event, self.run_id, str(self.facts.get("node_exec_id") or self.facts.get("node_id") or "")]
        if self.event == APPROVAL_WAITING:
            parts.append(self.at.isoformat())
        return ":".join(parts)


_listeners: list[Callable[[Notification], None]] = []


def notification_listener_register(listener: Callable[[Notification], None]) -> None:
    """Have ``listener`` hear every notification committed from now on in this process (once per listener)."""
    if listener not in _listeners:
        _listeners.append(listener)


def notify(event: str, *, run: Any, **facts: Any) -> None:
    """Announce ``event`` about ``run`` (a run or its id) with ``facts`` (JSON-ready values) once the
    current transaction commits (at once outside one). An unknown event is a programming error and raises
    ValueError."""
    if event not in EVENTS:
        raise ValueError(f"unknown notification event {event!r}; known: {', '.join(EVENTS)}")
    notification = Notification(event=event, run_id=str(getattr(run, "pk", run)), at=timezone.now(),
                                facts=dict(facts))
    transaction.on_commit(partial(_announce, notification))


def run_status_notify(*, run: Any, status: str, **facts: Any) -> None:
    """Announce what a run's move to ``status`` means to people, when it means something."""
    event = _EVENT_OF_RUN_STATUS.get(str(status))
    if event is not None:
        notify(event, run=run, **facts)


def nodes_failed_notify(*, run: Any, latest: dict[str, dict]) -> None:
    """Announce each node whose latest attempt (``latest``: node_id → its row's values) failed for good."""
    for node_id, row in sorted(latest.items()):
        if row.get("status") == "failed":
            notify(NODE_FAILED, run=run, node_id=node_id, node_exec_id=str(row.get("pk") or ""))


def _announce(notification: Notification) -> None:
    for listener in list(_listeners):
        try:
            listener(notification)
        except Exception:
            # The change is committed; a notification lost here must not fail the engine's job after it.
            logger.exception("notification listener %r failed on %s", listener, notification.event)
