"""A running attempt with its log open, and the lines its log stored, for the log store's tests."""

from __future__ import annotations

import json

from graphs.logs.store import log_file_open
from graphs.models import ExecutionLogLine, Task, WorkNodeExecution
from tests import factories


def running_with_log(task: Task) -> WorkNodeExecution:
    """A running attempt of a new run of ``task``, its log open."""
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    return execution


def stored(execution: WorkNodeExecution) -> list[dict]:
    """Each line its log stored, decoded, in the order of their numbers."""
    return [json.loads(text) for text in
            ExecutionLogLine.objects.filter(log_file_id=execution.pk).order_by("seq").values_list("text", flat=True)]
