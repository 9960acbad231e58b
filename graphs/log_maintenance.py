"""Looking after stored logs: importing the JSONL files of earlier versions, and pruning old lines."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.db import transaction
from django.db.models import Exists, OuterRef
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


@dataclass
class ImportReport:
    logs: int = 0
    lines: int = 0
    skipped_lines: int = 0
    missing_files: list[str] = field(default_factory=list)


def logs_import_files(*, directory: Path) -> ImportReport:
    """Store the lines of every log kept as a JSONL file under ``directory`` and not yet in the database.

    Each line keeps its text exactly, so a download reads as the file did. A line that is not a JSON
    object with an integer ``seq`` (one torn by a crash) is skipped and counted. Importing again
    changes nothing: a log that has lines stored is left alone, and a seq already stored is kept.
    """
    report = ImportReport()
    root = directory.resolve()
    has_lines = ExecutionLogLine.objects.filter(log_file=OuterRef("pk"))
    for log_file in ExecutionLogFile.objects.exclude(file_path="").exclude(Exists(has_lines)).iterator():
        path = (root / log_file.file_path).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            report.missing_files.append(log_file.file_path)
            continue
        lines, skipped = _file_lines_store(log_file, path)
        report.logs += 1
        report.lines += lines
        report.skipped_lines += skipped
    return report


def _file_lines_store(log_file: ExecutionLogFile, path: Path) -> tuple[int, int]:
    stored = skipped = size = last_seq = 0
    chunk: list[ExecutionLogLine] = []
    with transaction.atomic():
        with path.open("rb") as handle:
            for raw in handle:
                row = _line_row(log_file, raw)
                if row is None:
                    skipped += 1
                    continue
                chunk.append(row)
                size += len(row.text.encode()) + 1
                last_seq = max(last_seq, row.seq)
                if len(chunk) >= CHUNK:
                    stored += len(ExecutionLogLine.objects.bulk_create(chunk, ignore_conflicts=True))
                    chunk = []
        stored += len(ExecutionLogLine.objects.bulk_create(chunk, ignore_conflicts=True))
        ExecutionLogFile.objects.filter(pk=log_file.pk).update(
            line_count=stored, size_bytes=size, last_seq=max(last_seq, log_file.last_seq)
        )
    return stored, skipped


def _line_row(log_file: ExecutionLogFile, raw: bytes) -> ExecutionLogLine | None:
    if not raw.endswith(b"\n"):
        return None  # the last line of a file a crash cut short
    try:
        text = raw[:-1].decode()
        line = json.loads(text)
        ts = datetime.fromisoformat(line["ts"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(line, dict) or not isinstance(line.get("seq"), int) or line["seq"] < 1:
        return None
    return ExecutionLogLine(log_file=log_file, seq=line["seq"], ts=ts, event=str(line.get("event", ""))[:64],
                            text=text, cut=bool(line.get("cut")))


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
