"""The run events that may change an inbox or what a list page shows, told to the inbox sockets of their run's
project.

``inbox_event_publish`` is a run event listener, installed by ``graphs.apps`` beside the run pages'
publisher: an event that may change what a list shows (``list_event_may_change``: a run's status, its
progress, its nodes' statuses, nodes appended — never a log line) goes to the inbox group of its run's project
(``graphs.logs.live.project_inbox_group``) as ``project.event``, saying whether the inbox's own rule
(``inbox.inbox_event_may_change``) says it may change an inbox too; any other event goes nowhere. Whether it
changed a given person's inbox is the socket's to read: the event says only that something moved.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from graphs.logs.events import RunEvent
from graphs.logs.live import live_publish, project_inbox_group
from graphs.models import WorkGraphRun
from graphs.reads.inbox import inbox_event_may_change

# The runs whose project this process remembers: a run's project never changes, so each is asked once.
RUNS_REMEMBERED = 10_000
# What the task list, the runs list, the dashboard and the inbox show of a run moves with these events alone:
# its status, its progress and its nodes' statuses (the inbox's events are among them).
LISTED_EVENTS = frozenset({"run_status", "progress", "nodes", "nodes_appended"})


def list_event_may_change(event: Mapping[str, Any]) -> bool:
    """Whether a run event (``graphs.logs.events``) may change what a list of runs or tasks shows: a run's
    status, its progress, its nodes' statuses or nodes appended; never a log line."""
    return event.get("event") in LISTED_EVENTS


def inbox_event_publish(payload: RunEvent) -> None:
    """Run event listener: tell the inbox sockets of the run's project when ``payload`` may change a list page,
    and whether it may change an inbox."""
    if not list_event_may_change(payload):
        return
    try:
        project_id = _run_project(str(payload["run_id"]))
    except WorkGraphRun.DoesNotExist:  # deleted since: nothing of it is listed or waits on anyone
        return
    message = {"type": "project.event", "inbox": inbox_event_may_change(payload)}
    live_publish(group=project_inbox_group(project_id), message=message)


@functools.lru_cache(maxsize=RUNS_REMEMBERED)
def _run_project(run_id: str) -> Any:
    """The id of the run's project: one query the first time, none after (a missing run is not remembered)."""
    return WorkGraphRun.objects.filter(pk=run_id).values_list("task__project_id", flat=True).get()
