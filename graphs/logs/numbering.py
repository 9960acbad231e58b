"""Numbering an attempt's lines in this process, and holding them until the writer stores them.

The process writing a log numbers its lines: from 1 for a log it created, else on from the highest
seq stored (the reaper's ``worker_lost``, a collaborator's reported result). ``_Logs`` holds, per log,
the next seq, the counts and the lines not stored yet; ``writer`` owns the one instance and drains it.

Bounds. A line longer than ``WORKGRAPH_LOG_LINE_MAX_BYTES`` has its longest text fields cut (the
original sizes are kept on the line, under ``cut``). Past ``WORKGRAPH_LOG_MAX_LINES`` lines an
attempt's agent output is counted and dropped after one ``log_truncated`` line; the engine's own
lines, a handful per attempt, are still kept.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, Func, Max, PositiveBigIntegerField, Sum

from graphs.models import ExecutionLogFile, ExecutionLogLine, WorkNodeExecution

LogLine = dict[str, Any]

# The events of an agent's or a command's output, which the line cap stops; every other event is the engine's own. A
# call's ``agent_init`` and ``agent_result`` (one each, the call's accounting) are kept past the cap.
OUTPUT_EVENTS = frozenset({"agent_output", "agent_text", "tool_call", "tool_result", "api_retry", "agent_event",
                           "command_output"})
CUT_SUFFIX = " …[cut]"


def log_line_text(line: LogLine) -> tuple[str, bool, int, LogLine]:
    """Return the JSON text of a line, cut to ``WORKGRAPH_LOG_LINE_MAX_BYTES``; whether it was cut; its
    size in bytes (UTF-8); and the line as stored — what reading the text back gives.

    The longest strings are cut first; ``cut`` on the line records each cut field's size in bytes.
    A line still too long (a huge list, say) keeps only seq, ts, event and what was cut. The text is
    encoded here once, and the line it returns is the one the store, the readers and the live pages
    all see: ``line`` itself when it held only JSON's own types and was not cut, else its text read back.
    """
    text, size, plain = _dumps(line)
    limit = settings.WORKGRAPH_LOG_LINE_MAX_BYTES
    if size <= limit:
        return text, False, size, line if plain else json.loads(text)
    over = size - limit
    cut: dict[str, int] = {}
    fields = {key: value for key, value in line.items() if key not in {"seq", "ts", "event"}}
    for key in sorted((k for k, v in fields.items() if isinstance(v, str)), key=lambda k: -len(fields[k])):
        encoded = fields[key].encode(errors="surrogatepass")
        keep = max(0, len(encoded) - over - 256)  # room for the suffix, the escapes and the ``cut`` record
        fields[key] = encoded[:keep].decode(errors="ignore") + CUT_SUFFIX
        cut[key] = len(encoded)
        text, size, _ = _dumps({"seq": line["seq"], "ts": line["ts"], "event": line["event"], **fields, "cut": cut})
        over = size - limit
        if over <= 0:
            return text, True, size, json.loads(text)
    summary = {"seq": line["seq"], "ts": line["ts"], "event": line["event"],
               "cut": cut or {}, "payload_bytes": _dumps(line)[1]}
    text, size, _ = _dumps(summary)
    return text, True, size, json.loads(text)


def _dumps(line: LogLine) -> tuple[str, int, bool]:
    """The line's JSON text, its size in bytes, and whether the line holds only JSON's own types."""
    try:
        text, plain = json.dumps(line, ensure_ascii=False), True
    except TypeError:  # a value JSON has no type for (a path, a date, a decimal): kept as its str
        text, plain = json.dumps(line, ensure_ascii=False, default=str), False
    if text.isascii():  # most lines: their size is their length, and no surrogate can be in them
        return text, len(text), plain
    try:
        return text, len(text.encode()), plain
    except UnicodeEncodeError:
        # A lone surrogate (an agent's broken output) cannot be stored as UTF-8: keep it escaped.
        text = json.dumps(line, ensure_ascii=True, default=str)
        return text, len(text), plain


class _OctetLength(Func):
    """A text's length in bytes (UTF-8), on PostgreSQL and SQLite alike."""

    function = "OCTET_LENGTH"
    output_field = PositiveBigIntegerField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))", **extra_context)


def _line_size() -> Func:
    """A stored line's size in the JSONL download: its text and its newline."""
    return _OctetLength("text") + 1


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(eq=False)
class _Line:
    log: _Log
    log_id: Any
    execution: WorkNodeExecution
    line: LogLine
    text: str
    cut: bool
    size: int
    # Numbered inside a caller's transaction, whose rollback undoes what it tells of (``transacted``).
    transacted: bool = False


@dataclass(eq=False)
class _Log:
    """What this process knows of one log it writes: the next seq, its counts, its unwritten lines."""

    log_file: ExecutionLogFile
    execution: WorkNodeExecution
    next_seq: int
    kept: int
    size: int
    dropped: int = 0
    truncated: bool = False
    pending: deque[_Line] = field(default_factory=deque)
    in_flight: list[_Line] = field(default_factory=list)
    closes: list[threading.Event] = field(default_factory=list)
    header_missing_since: float | None = None
    # The transaction that made its header committed: a batch that failed on the header failed before
    # that, and is not held back for it (``writer.header_committed``).
    header_seen: bool = False
    # Stored, and waiting for an earlier line to be told first (see ``_batch_tell``).
    untold: list[_Line] = field(default_factory=list)
    close_untold: bool = False


class _Logs:
    """The logs this process writes, under one lock shared with the writer thread."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.logs: dict[Any, _Log] = {}
        self._fresh: set[Any] = set()
        self.waiting = 0

    def fresh(self, log_id: Any) -> None:
        """Record that this process just created the log: it has no lines anywhere yet."""
        with self.lock:
            if log_id not in self.logs:
                self._fresh.add(log_id)

    def number(self, log_file: ExecutionLogFile, execution: WorkNodeExecution, *, event: str,
               fields: dict[str, Any], transacted: bool = False) -> _Line | None:
        log = self._log(log_file, execution)
        with self.lock:
            log.execution = execution
            if event in OUTPUT_EVENTS and log.kept >= settings.WORKGRAPH_LOG_MAX_LINES:
                log.dropped += 1
                if log.truncated:
                    return None
                log.truncated = True
                event, fields = "log_truncated", {
                    "max_lines": settings.WORKGRAPH_LOG_MAX_LINES,
                    "detail": "further agent output is counted, not kept; the count is on the log when it closes",
                }
            text, cut, size, line = log_line_text(
                {"seq": log.next_seq, "ts": _now_iso(), "event": event, **fields}
            )
            numbered = _Line(log=log, log_id=log_file.pk, execution=execution, line=line, text=text, cut=cut,
                             size=size, transacted=transacted)
            log.next_seq += 1
            log.kept += 1
            log.size += size + 1
            log.pending.append(numbered)
            self.waiting += 1
        return numbered

    def close_request(self, log_file: ExecutionLogFile, execution: WorkNodeExecution) -> threading.Event:
        log = self._log(log_file, execution)
        done = threading.Event()
        with self.lock:
            log.closes.append(done)
        return done

    def unwritten(self, log_id: Any) -> list[LogLine]:
        with self.lock:
            log = self.logs.get(log_id)
            return [item.line for item in (*log.in_flight, *log.pending)] if log is not None else []

    def _log(self, log_file: ExecutionLogFile, execution: WorkNodeExecution) -> _Log:
        with self.lock:
            log = self.logs.get(log_file.pk)
            if log is not None:
                return log
            fresh = log_file.pk in self._fresh
            self._fresh.discard(log_file.pk)
        if fresh:
            last, kept, size = 0, 0, 0
        else:
            last, kept, size = _stored_tail(log_file.pk)
        with self.lock:
            return self.logs.setdefault(
                log_file.pk, _Log(log_file=log_file, execution=execution, next_seq=last + 1, kept=kept, size=size)
            )


def _stored_tail(log_id: Any) -> tuple[int, int, int]:
    """The highest seq, the count and the size of a log's stored lines (for a log another process wrote)."""
    stored = ExecutionLogLine.objects.filter(log_file_id=log_id).aggregate(
        last=Max("seq"), count=Count("id"), size=Sum(_line_size())
    )
    header_last = ExecutionLogFile.objects.filter(pk=log_id).values_list("last_seq", flat=True).first() or 0
    return max(stored["last"] or 0, header_last), stored["count"], stored["size"] or 0

