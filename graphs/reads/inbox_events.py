"""The run events that may change an inbox, told to the inbox sockets of their run's project.

``inbox_event_publish`` is a run event listener, installed by ``graphs.apps`` beside the run pages'
publisher: an event the inbox's own rule (``inbox.inbox_event_may_change``) says may change an inbox goes to
the inbox group of its run's project (``graphs.logs.live.project_inbox_group``) as ``inbox.event``; any
other event goes nowhere. Whether it changed a given person's inbox is the socket's to read: the event
says only that something moved.
"""

from __future__ import annotations

import functools
from typing import Any

from graphs.logs.events import RunEvent
from graphs.logs.live import live_publish, project_inbox_group
from graphs.models import WorkGraphRun
from graphs.reads.inbox import inbox_event_may_change

# The runs whose project this process remembers: a run's project never changes, so each is asked once.
RUNS_REMEMBERED = 10_000


def inbox_event_publish(payload: RunEvent) -> None:
    """Run event listener: tell the inbox sockets of the run's project when ``payload`` may change an inbox."""
    if not inbox_event_may_change(payload):
        return
    try:
        project_id = _run_project(str(payload["run_id"]))
    except WorkGraphRun.DoesNotExist:  # deleted since: nothing of it waits on anyone
        return
    live_publish(group=project_inbox_group(project_id), message={"type": "inbox.event"})


@functools.lru_cache(maxsize=RUNS_REMEMBERED)
def _run_project(run_id: str) -> Any:
    """The id of the run's project: one query the first time, none after (a missing run is not remembered)."""
    return WorkGraphRun.objects.filter(pk=run_id).values_list("task__project_id", flat=True).get()
