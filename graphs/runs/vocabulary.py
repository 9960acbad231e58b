"""The status vocabulary the browser draws with: which run and attempt statuses exist, which of them are
finished or under way, and the words each reads as.

Generated from the models' own definitions (``WorkGraphRun.Status``, ``WorkNodeExecution.Status`` and
their ``FINISHED_STATUSES``/``ACTIVE_STATUSES``/``WAITING_STATUSES``), and given to every page as one JSON
document (``base.html``), so no script keeps a copy of a Python fact that could drift from it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db import models

from graphs.models import Task, WorkGraphRun, WorkNodeExecution

# A node of a run's graph that has no attempt yet: the status the graph shows for it.
NOT_STARTED = "not_started"
# The attempt statuses a graph too large to fit legibly opens on, in order of preference: its running
# nodes, else its failed ones (else, the drawing decides, its first).
FOCUS_STATUSES = ("running", "failed")


def status_words(status: str) -> str:
    """A stored status as pages read it: ``awaiting_approval`` reads "awaiting approval"."""
    return status.replace("_", " ")


def _statuses(
    choices: type[models.TextChoices], *, finished: frozenset[str] = frozenset(), active: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    values = [choice.value for choice in choices]
    return {
        "all": values,
        "finished": [value for value in values if value in finished],
        "active": [value for value in values if value in active],
        "words": {value: status_words(value) for value in values},
    }


@cache
def status_vocabulary() -> dict[str, Any]:
    """``{"task": {...}, "run": {...}, "attempt": {...}}``, each with ``all`` (in the models' order),
    ``finished`` and ``active`` (an attempt's; empty where the model defines none) and ``words`` (status →
    the words a page shows). The attempt's also has ``focus`` (``FOCUS_STATUSES``) and ``waiting`` (those
    neither finished nor under way: waiting on a person), and its words name ``not_started``, the status a
    graph gives a node with no attempt."""
    attempt = _statuses(
        WorkNodeExecution.Status,
        finished=WorkNodeExecution.FINISHED_STATUSES,
        active=WorkNodeExecution.ACTIVE_STATUSES,
    )
    attempt["words"][NOT_STARTED] = status_words(NOT_STARTED)
    attempt["focus"] = list(FOCUS_STATUSES)
    attempt["waiting"] = [value for value in attempt["all"] if value in WorkNodeExecution.WAITING_STATUSES]
    return {
        "task": _statuses(Task.Status),
        "run": _statuses(WorkGraphRun.Status, finished=WorkGraphRun.FINISHED_STATUSES),
        "attempt": attempt,
    }
