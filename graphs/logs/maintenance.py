"""Looking after stored logs: pruning old lines."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from graphs.models import ExecutionLogFile, ExecutionLogLine

# Lines are inserted, and deleted, this many at a time: a long log never sits whole in one statement.
CHUNK = 2000
_DURATION = re.compile(r"^\s*(\d+)\s*([dhm]?)\s*$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes", "": "days"}


def duration_parse(text: str) -> timedelta:
    """``30d``, ``12h``, ``90m`` or a bare number of days, as a timedelta; ValueError otherwise."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration: write 30d, 12h, 90m or a number of days")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


@dataclass(frozen=True)
class PruneReport:
    logs: int
    lines: int


def logs_prune(*, older_than: timedelta, dry_run: bool = False) -> PruneReport:
    """Delete the lines of logs closed more than ``older_than`` ago; keep their headers, marked pruned.

    An open log is never pruned, however old: its attempt may still be running. Lines go a chunk
    at a time, so a large prune never holds one long transaction.
    """
    cutoff = timezone.now() - older_than
    due = ExecutionLogFile.objects.filter(
        status=ExecutionLogFile.Status.CLOSED, closed_at__lt=cutoff, pruned_at__isnull=True
    )
    if dry_run:
        return PruneReport(logs=due.count(), lines=ExecutionLogLine.objects.filter(log_file__in=due).count())
    logs = lines = 0
    for log_id in list(due.values_list("pk", flat=True)):
        while True:
            ids = list(ExecutionLogLine.objects.filter(log_file_id=log_id).values_list("id", flat=True)[:CHUNK])
            if not ids:
                break
            lines += ExecutionLogLine.objects.filter(id__in=ids).delete()[0]
        logs += ExecutionLogFile.objects.filter(pk=log_id).update(pruned_at=timezone.now())
    return PruneReport(logs=logs, lines=lines)
