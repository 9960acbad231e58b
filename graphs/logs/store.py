"""Execution logs, stored in the database.

A line is ``{"seq": n, "ts": ..., "event": ..., ...fields}``. Its JSON text — exactly what download
and export produce — is an ``ExecutionLogLine`` row; ``ExecutionLogFile`` is the log's header. The
database is the store in every mode, so any console process on any machine serves any log, and the
lines ride on the same distributed parts as everything else.

Writing. ``log_append`` numbers the line and queues it in this process's writer, which returns at
once; the writer's thread drains the queue with one INSERT per drain (the lines of every log that
came in meanwhile) and only then tells the listeners (the live path). So a line anyone was shown is
in the store. A drain that starts right after the previous one first waits ``DRAIN_WINDOW_SECONDS``
for more lines, so a process killed mid-stream loses the lines of that window and of the INSERT under
way, never more — and no reader saw them, as nothing unwritten is published.

Inside a transaction a line is written at once, in that transaction (one INSERT): the writer's own
connection could not see rows the transaction made, and on SQLite it would queue behind the
transaction's write lock while the transaction waited for it.

Numbering. The process writing a log numbers its lines: from 1 for a log it created, else on from
the highest seq stored (the reaper's ``worker_lost``, a collaborator's reported result). Two processes
writing one log at the same moment meet on the unique (log, seq); the one that loses renumbers the
lines it has not written yet, before anyone was told of them.

Bounds. A line longer than ``WORKGRAPH_LOG_LINE_MAX_BYTES`` has its longest text fields cut (the
original sizes are kept on the line, under ``cut``). Past ``WORKGRAPH_LOG_MAX_LINES`` lines an
attempt's agent output is counted and dropped after one ``log_truncated`` line; the engine's own
lines, a handful per attempt, are still kept. ``logs_prune`` deletes the lines of old logs.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, Func, Max, PositiveBigIntegerField, Sum
from django.utils import timezone

from graphs.models import ExecutionLogFile, ExecutionLogLine, WorkNodeExecution
from graphs.transactions import transaction_unflushed

logger = logging.getLogger(__name__)

LogLine = dict[str, Any]

# A drain that starts this soon after the previous one waits this long for more lines to come with it.
DRAIN_WINDOW_SECONDS = 0.02
# At most this many lines go in one INSERT.
MAX_DRAIN_LINES = 2000
# Past this many lines waiting to be written (the database away), appends outside a transaction wait.
MAX_WAITING_LINES = 200_000
# How long ``log_file_close`` waits for the writer to store the log's last lines and close it.
CLOSE_WAIT_SECONDS = 30.0
# Lines of a log whose header this process cannot see (its transaction never committed) are
# dropped, with a warning, after this long.
HEADER_WAIT_SECONDS = 60.0
HEADER_RETRY_SECONDS = 0.5
# A writer with nothing to write this long closes its database connection (opened again on the next line).
IDLE_SECONDS = 10.0
# A writer that cannot reach the database tries again after this long, doubling up to the cap.
RETRY_FIRST_SECONDS = 0.1
RETRY_CAP_SECONDS = 5.0
# The events of an agent's or a command's output, which the line cap stops; every other event is the engine's own. A
# call's ``agent_init`` and ``agent_result`` (one each, the call's accounting) are kept past the cap.
OUTPUT_EVENTS = frozenset({"agent_output", "agent_text", "tool_call", "tool_result", "api_retry", "agent_event",
                           "command_output"})
CUT_SUFFIX = " …[cut]"

_listeners: list[Callable[[WorkNodeExecution, LogLine], None]] = []
_close_listeners: list[Callable[[WorkNodeExecution, int], None]] = []


def log_listener_register(listener: Callable[[WorkNodeExecution, LogLine], None]) -> None:
    """Call ``listener(execution, line)`` once each line is stored (used to publish live)."""
    if listener not in _listeners:
        _listeners.append(listener)


def log_close_listener_register(listener: Callable[[WorkNodeExecution, int], None]) -> None:
    """Call ``listener(execution, last_seq)`` once, when the log is marked closed."""
    if listener not in _close_listeners:
        _close_listeners.append(listener)


def log_file_open(*, execution: WorkNodeExecution) -> ExecutionLogFile:
    """Create the log of ``execution`` (idempotent) and return its header, kept on ``execution``."""
    log_file = log_file_create(node_exec_id=execution.pk, project_id=execution.run.task.project_id)
    execution._log_file_cache = log_file
    return log_file


def log_file_create(*, node_exec_id: Any, project_id: Any) -> ExecutionLogFile:
    """Create the log of an attempt known by its ids (idempotent) and return its header.

    The header's id is the attempt's, so ``INSERT … ON CONFLICT DO NOTHING`` is one statement where
    get_or_create takes four, and inside a caller's transaction it needs no savepoint. What it returns
    tells whether this INSERT made the header: a fresh log is numbered from 1 without a query.
    """
    log_file = ExecutionLogFile(log_file_id=node_exec_id, node_exec_id=node_exec_id, project_id=project_id)
    created = _insert_ignoring_conflicts(ExecutionLogFile, [log_file], conflict=["log_file_id"])
    if created:
        _logs.fresh(log_file.pk)
    return log_file


def log_append(*, execution: WorkNodeExecution, event: str, **fields: Any) -> LogLine | None:
    """Number one line of the execution's log and hand it to the writer; return it.

    Returns None for agent output past the line cap (counted, not kept).
    """
    log_file = _log_file_of(execution)
    line = _logs.number(log_file, execution, event=event, fields=fields)
    if line is None:
        return None
    if connection.in_atomic_block:
        _write_in_caller_transaction(log_file.pk)
    else:
        _writer.wake(block=True)
    return line.line


def log_file_close(*, execution: WorkNodeExecution) -> None:
    """Store the log's last lines and mark it closed, with its counts; then tell the close listeners.

    Inside a caller's transaction both are part of it (a node's result and its log's close commit
    together). Outside one, the writer does it and this waits up to ``CLOSE_WAIT_SECONDS``; a log it
    could not close (the database away) stays open for the reaper (``logs_left_open_close``).
    """
    log_file = _log_file_of(execution)
    if connection.in_atomic_block:
        _write_in_caller_transaction(log_file.pk, close=True)
        return
    done = _logs.close_request(log_file, execution)
    _writer.wake(block=False)
    if not done.wait(CLOSE_WAIT_SECONDS):
        logger.warning("log of attempt %s left open for the reaper: not stored in time", execution.pk)


def log_file_close_soon(*, execution: WorkNodeExecution) -> None:
    """Close the log like ``log_file_close``, but without waiting: the writer closes it meanwhile.

    For a worker that runs a chain's next node as soon as it has recorded this one's result. Until
    then the attempt shows finished and its log open, which readers handle as a log still written.
    """
    if connection.in_atomic_block:
        log_file_close(execution=execution)
        return
    _logs.close_request(_log_file_of(execution), execution)
    _writer.wake(block=False)


def log_writes_wait(timeout: float = 30.0) -> bool:
    """Wait until every line and close handed to this process's writer is stored; return whether it is.

    A job calls this before it ends, so nothing is left in memory when its process stops. Lines held
    back for an attempt this process cannot see in the database are not waited for (see
    ``HEADER_WAIT_SECONDS``). Inside a transaction it does not wait at all, and says whether all is
    stored: on SQLite the writer may need the write lock that transaction holds.
    """
    return _writer.wait_idle(0 if connection.in_atomic_block else timeout)


def log_writer_stop(timeout: float = 30.0) -> bool:
    """Store what this process's writer holds, then end its thread and close its database connection.

    Called as the process exits; returns whether everything was stored. The next line starts it again.
    """
    return _writer.stop(timeout)


def logs_left_open_close(*, finished_before: datetime) -> int:
    """Close the logs still open of attempts that finished before ``finished_before``; return how many.

    A worker killed between committing a result and closing its log leaves one behind. Its counts are
    taken from the lines stored, wherever the worker ran.
    """
    left_open = (
        ExecutionLogFile.objects.filter(status=ExecutionLogFile.Status.OPEN, node_exec__finished_at__lt=finished_before)
        .exclude(node_exec__status__in=WorkNodeExecution.ACTIVE_STATUSES)
        .select_related("node_exec")
    )
    closed = 0
    for log_file in left_open:
        if _logs.unwritten(log_file.pk):
            continue  # this process still holds lines of it: its writer closes it
        stored = ExecutionLogLine.objects.filter(log_file=log_file).aggregate(
            last=Max("seq"), count=Count("id"), size=Sum(_line_size())
        )
        last_seq = max(stored["last"] or 0, log_file.last_seq)
        updated = ExecutionLogFile.objects.filter(pk=log_file.pk, status=ExecutionLogFile.Status.OPEN).update(
            status=ExecutionLogFile.Status.CLOSED, closed_at=timezone.now(), last_seq=last_seq,
            line_count=stored["count"], size_bytes=stored["size"] or 0,
        )
        if updated:
            closed += 1
            _notify(_close_listeners, log_file.node_exec, last_seq)
    return closed


def log_read(*, log_file: ExecutionLogFile, after: int = 0, limit: int | None = None) -> list[LogLine]:
    """Return the lines with ``seq > after`` in seq order, at most ``limit`` of them.

    Lines this process has numbered and not stored yet are included, so a writer reads what it wrote.
    They are taken before the stored lines are read: a line the writer commits in between is then in
    one or both (once in the answer), where taken after it could be in neither.
    """
    unwritten = [line for line in _logs.unwritten(log_file.pk) if line["seq"] > after]
    stored = ExecutionLogLine.objects.filter(log_file_id=log_file.pk, seq__gt=after).order_by("seq")
    texts = stored.values_list("text", flat=True)
    lines = [json.loads(text) for text in (texts[:limit] if limit is not None else texts)]
    if unwritten:
        merged = {line["seq"]: line for line in lines} | {line["seq"]: line for line in unwritten}
        lines = [merged[seq] for seq in sorted(merged)][:limit]
    return lines


def log_texts(*, log_file: ExecutionLogFile, chunk: int = 2000) -> Iterator[str]:
    """Yield the stored log as JSONL, line by line (each with its newline), reading ``chunk`` at a time."""
    after = 0
    while True:
        rows = list(
            ExecutionLogLine.objects.filter(log_file_id=log_file.pk, seq__gt=after)
            .order_by("seq").values_list("seq", "text")[:chunk]
        )
        for _, text in rows:
            yield text + "\n"
        if len(rows) < chunk:
            return
        after = rows[-1][0]


def log_line_text(line: LogLine) -> tuple[str, bool]:
    """Return the JSON text of a line, cut to ``WORKGRAPH_LOG_LINE_MAX_BYTES``, and whether it was cut.

    The longest strings are cut first; ``cut`` on the line records each cut field's size in bytes.
    A line still too long (a huge list, say) keeps only seq, ts, event and what was cut.
    """
    text = _dumps(line)
    limit = settings.WORKGRAPH_LOG_LINE_MAX_BYTES
    if len(text) * 4 <= limit or len(text.encode()) <= limit:
        return text, False
    over = len(text.encode()) - limit
    cut: dict[str, int] = {}
    fields = {key: value for key, value in line.items() if key not in {"seq", "ts", "event"}}
    for key in sorted((k for k, v in fields.items() if isinstance(v, str)), key=lambda k: -len(fields[k])):
        encoded = fields[key].encode()
        keep = max(0, len(encoded) - over - 256)  # room for the suffix, the escapes and the ``cut`` record
        fields[key] = encoded[:keep].decode(errors="ignore") + CUT_SUFFIX
        cut[key] = len(encoded)
        text = _dumps({"seq": line["seq"], "ts": line["ts"], "event": line["event"], **fields, "cut": cut})
        over = len(text.encode()) - limit
        if over <= 0:
            return text, True
    summary = {"seq": line["seq"], "ts": line["ts"], "event": line["event"],
               "cut": cut or {}, "payload_bytes": len(_dumps(line).encode())}
    return _dumps(summary), True


def _dumps(line: LogLine) -> str:
    text = json.dumps(line, ensure_ascii=False, default=str)
    try:
        text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (an agent's broken output) cannot be stored as UTF-8: keep it escaped.
        text = json.dumps(line, ensure_ascii=True, default=str)
    return text


class _OctetLength(Func):
    """A text's length in bytes (UTF-8), on PostgreSQL and SQLite alike."""

    function = "OCTET_LENGTH"
    output_field = PositiveBigIntegerField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))", **extra_context)


def _line_size() -> Func:
    """A stored line's size in the JSONL download: its text and its newline."""
    return _OctetLength("text") + 1


def _notify(listeners: list[Callable[..., None]], *args: Any) -> None:
    for listener in list(listeners):
        try:
            listener(*args)
        except Exception:
            # The line is already stored; a failing live listener must not fail the work that wrote it.
            logger.exception("log listener %r failed", listener)


def _log_file_of(execution: WorkNodeExecution) -> ExecutionLogFile:
    cached = getattr(execution, "_log_file_cache", None)
    if cached is not None:
        return cached
    try:
        log_file = execution.log_file
    except ExecutionLogFile.DoesNotExist:
        log_file = log_file_open(execution=execution)
    execution._log_file_cache = log_file
    return log_file


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
               fields: dict[str, Any]) -> _Line | None:
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
            line: LogLine = {"seq": log.next_seq, "ts": _now_iso(), "event": event, **fields}
            text, cut = log_line_text(line)
            numbered = _Line(log=log, log_id=log_file.pk, execution=execution, line=line, text=text, cut=cut)
            log.next_seq += 1
            log.kept += 1
            log.size += len(text.encode()) + 1
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


_logs = _Logs()
_tell_lock = threading.RLock()


@dataclass
class _Batch:
    lines: list[_Line]
    closing: list[_Log]


def _batch_take(*, limit: int, only: Any = None, close: bool = False, held: bool = False) -> _Batch:
    """Take lines to write (all of one log with ``only``) and the closes that may go with them.

    A log closes with the batch that takes its last lines, once no other batch holds lines of it.
    Logs whose header could not be seen go in batches of their own (``held``), so they never hold
    back the others.
    """
    lines: list[_Line] = []
    closing: list[_Log] = []
    with _logs.lock:
        logs = [_logs.logs[only]] if only is not None else [
            log for log in _logs.logs.values() if (log.header_missing_since is not None) == held
        ]
        for log in logs:
            before = len(log.in_flight)
            while log.pending and len(lines) < limit:
                item = log.pending.popleft()
                log.in_flight.append(item)
                lines.append(item)
            if (log.closes or close) and not log.pending and (only is not None or before == 0):
                closing.append(log)
    return _Batch(lines=lines, closing=closing)


def _batch_store(batch: _Batch) -> None:
    """Insert the batch's lines in one INSERT and mark its closes, in the current transaction."""
    for start in range(0, len(batch.lines), MAX_DRAIN_LINES):  # bound the statement's parameters
        remaining = batch.lines[start : start + MAX_DRAIN_LINES]
        while remaining:
            remaining = _lines_insert(remaining)
            if remaining:
                _renumber(remaining, later=batch.lines[start + MAX_DRAIN_LINES :])
    for log in batch.closing:
        with _logs.lock:
            last_seq, kept, size, dropped = log.next_seq - 1, log.kept, log.size, log.dropped
        ExecutionLogFile.objects.filter(pk=log.log_file.pk).update(
            status=ExecutionLogFile.Status.CLOSED, closed_at=timezone.now(), last_seq=last_seq, line_count=kept,
            size_bytes=size, lines_dropped=dropped,
        )


def _batch_forget(batch: _Batch) -> None:
    """The batch is stored: its lines are no longer this process's to write, its closed logs neither."""
    with _logs.lock:
        for item in batch.lines:
            log = _logs.logs.get(item.log_id)
            if log is not None:
                log.in_flight.remove(item)
                log.header_missing_since = None
        _logs.waiting -= len(batch.lines)
        for log in batch.closing:
            if not log.pending and not log.in_flight:
                _logs.logs.pop(log.log_file.pk, None)
        _logs.lock.notify_all()


def _batch_tell(batch: _Batch) -> None:
    """The batch is committed: tell the listeners, release who waits on a close.

    Listeners hear each log's lines in seq order: a line stored before an earlier one (written in a
    caller's transaction while the writer still held the earlier) waits for it, and a close waits
    for the last line. One teller at a time, so two threads' tells never interleave.
    """
    with _tell_lock:
        released: list[_Line] = []
        closed: list[_Log] = []
        with _logs.lock:
            for item in batch.lines:
                item.log.untold.append(item)
            for log in batch.closing:
                log.close_untold = True
            for log in dict.fromkeys([*(item.log for item in batch.lines), *batch.closing]):
                floor = min((item.line["seq"] for item in (*log.pending, *log.in_flight)), default=None)
                log.untold.sort(key=lambda item: item.line["seq"])
                ready = [item for item in log.untold if floor is None or item.line["seq"] < floor]
                log.untold = log.untold[len(ready):]
                released += ready
                if log.close_untold and not log.untold and floor is None:
                    log.close_untold = False
                    closed.append(log)
        for item in released:
            _notify(_listeners, item.execution, item.line)
        for log in closed:
            _notify(_close_listeners, log.execution, log.next_seq - 1)
            with _logs.lock:
                waiting, log.closes = log.closes, []
            for event in waiting:
                event.set()


def _batch_return(batch: _Batch) -> None:
    """Give the lines of a batch that could not be stored back to their logs, in order, for the next try."""
    with _logs.lock:
        for item in reversed(batch.lines):
            log = _logs.logs.get(item.log_id)
            if log is not None and item in log.in_flight:
                log.in_flight.remove(item)
                log.pending.appendleft(item)


def _write_in_caller_transaction(log_id: Any, *, close: bool = False) -> None:
    """Store the unwritten lines of one log (and close it) in the caller's transaction; tell on commit.

    Rolled back, they are gone with the rest of the transaction, as what they told of did not happen.
    """
    batch = _batch_take(limit=MAX_WAITING_LINES, only=log_id, close=close)  # all of them, in order
    try:
        _batch_store(batch)
    except BaseException:
        _batch_return(batch)
        raise
    _batch_forget(batch)
    transaction.on_commit(lambda: _batch_tell(batch))


def _lines_insert(lines: list[_Line]) -> list[_Line]:
    """INSERT the lines at once; return those whose seq another process had taken meanwhile."""
    rows = [
        ExecutionLogLine(log_file_id=item.log_id, seq=item.line["seq"], ts=datetime.fromisoformat(item.line["ts"]),
                         event=item.line["event"][:64], text=item.text, cut=item.cut)
        for item in lines
    ]
    inserted = _insert_ignoring_conflicts(ExecutionLogLine, rows, conflict=["log_file_id", "seq"],
                                          returning=["log_file_id", "seq"])
    if len(inserted) == len(lines):
        return []
    written = {(str(log_id), seq) for log_id, seq in inserted}
    return [item for item in lines if (str(item.log_id), item.line["seq"]) not in written]


def _renumber(conflicted: list[_Line], *, later: list[_Line]) -> None:
    """Number the lines that lost their seq after the stored ones, and every line of their logs this
    process has not stored yet (``later`` in the batch, then pending) after them, in order."""
    for log_id in dict.fromkeys(item.log_id for item in conflicted):
        last, _, _ = _stored_tail(log_id)
        with _logs.lock:
            log = _logs.logs[log_id]
            unstored = [item for item in (*conflicted, *later) if item.log_id == log_id] + list(log.pending)
            for item in unstored:
                last += 1
                item.line["seq"] = last
                item.text, item.cut = log_line_text(item.line)
            log.next_seq = last + 1
    logger.info("renumbered %d log lines another process had numbered alike", len(conflicted))


def _insert_ignoring_conflicts(model, objects: list, *, conflict: list[str], returning: list[str] | None = None):
    """``INSERT … ON CONFLICT (conflict) DO NOTHING RETURNING …`` on PostgreSQL and SQLite alike.

    Returns the rows inserted (their ``returning`` columns, else their first), so the caller knows
    which went in without a second query. Django's ``bulk_create(ignore_conflicts=True)`` cannot tell.
    """
    fields = [f for f in model._meta.concrete_fields if not getattr(f, "db_returning", False)]
    quote = connection.ops.quote_name
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    params: list[Any] = []
    for obj in objects:
        params.extend(f.get_db_prep_save(f.pre_save(obj, add=True), connection) for f in fields)
    # Only the model's own table and column names are spliced in; every value is a parameter.
    table, columns = quote(model._meta.db_table), ", ".join(quote(f.column) for f in fields)
    rows, returned = ", ".join([row] * len(objects)), ", ".join(map(quote, returning or [fields[0].column]))
    sql = (
        f"INSERT INTO {table} ({columns}) VALUES {rows} "  # noqa: S608
        f"ON CONFLICT ({', '.join(map(quote, conflict))}) DO NOTHING RETURNING {returned}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class _Writer:
    """The thread that drains this process's lines into the database, one INSERT per drain."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._wanted = False
        self._busy = False
        self._drained_at = float("-inf")
        self._held_tried_at = float("-inf")
        self._stopping = False

    def wake(self, *, block: bool) -> None:
        with _logs.lock:
            if block and _logs.waiting > MAX_WAITING_LINES:
                # The database is away or far behind: the agent's reader waits here, and so does the agent.
                _logs.lock.wait_for(lambda: _logs.waiting <= MAX_WAITING_LINES, timeout=RETRY_CAP_SECONDS)
            self._wanted = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain_forever, name="log-writer", daemon=True)
                self._thread.start()
            _logs.lock.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is left to write but lines held back for a header that may never come."""

        def idle() -> bool:
            return not self._wanted and not self._busy and not any(
                (log.pending or log.in_flight or log.closes) and log.header_missing_since is None
                for log in _logs.logs.values()
            )

        with _logs.lock:
            return _logs.lock.wait_for(idle, timeout)

    def stop(self, timeout: float) -> bool:
        """Write what is left, then end the thread and close its connection; return whether all was written."""
        written = self.wait_idle(timeout)
        with _logs.lock:
            if self._thread is None:
                return written
            self._stopping = True
            _logs.lock.notify_all()
            _logs.lock.wait_for(lambda: self._thread is None, timeout)
            self._stopping = False
        return written

    def _drain_forever(self) -> None:
        delay = RETRY_FIRST_SECONDS
        while True:
            with _logs.lock:
                # Lines held back for a header not yet visible are tried again without being asked.
                held = any(log.header_missing_since is not None for log in _logs.logs.values())
                woken = _logs.lock.wait_for(lambda: self._wanted or self._stopping,
                                            timeout=HEADER_RETRY_SECONDS if held else IDLE_SECONDS)
                if self._stopping and not self._wanted:
                    connection.close()
                    self._thread = None
                    _logs.lock.notify_all()
                    return
                if not woken and not held:
                    connection.close()  # a quiet process holds no connection for its log
                    continue
                self._wanted = False
                self._busy = True
            if time.monotonic() - self._drained_at < DRAIN_WINDOW_SECONDS:
                time.sleep(DRAIN_WINDOW_SECONDS)  # lines are streaming in: let more come with this drain
            try:
                more = self._drain_once()
                delay = RETRY_FIRST_SECONDS
            except (OperationalError, InterfaceError):
                logger.warning("log writer: no database; trying again in %.1f s", delay, exc_info=True)
                connection.close()
                time.sleep(delay)
                delay = min(delay * 2, RETRY_CAP_SECONDS)
                more = True
            except Exception:
                logger.exception("log writer: a drain failed; trying again in %.1f s", delay)
                time.sleep(delay)
                delay = min(delay * 2, RETRY_CAP_SECONDS)
                more = True
            finally:
                self._drained_at = time.monotonic()
            with _logs.lock:
                self._busy = False
                if more:
                    self._wanted = True
                _logs.lock.notify_all()

    def _drain_once(self) -> bool:
        """Write one batch; return whether lines are left to write (those held back aside)."""
        self._batch_write(_batch_take(limit=MAX_DRAIN_LINES))
        if time.monotonic() - self._held_tried_at >= HEADER_RETRY_SECONDS:
            self._held_tried_at = time.monotonic()
            self._batch_write(_batch_take(limit=MAX_DRAIN_LINES, held=True))
        with _logs.lock:
            return any((log.pending or log.closes) and log.header_missing_since is None for log in _logs.logs.values())

    def _batch_write(self, batch: _Batch) -> None:
        if not batch.lines and not batch.closing:
            return
        try:
            with transaction_unflushed():
                _batch_store(batch)
        except IntegrityError:
            _batch_return(batch)
            self._headers_missing(batch)
            return
        except BaseException:
            _batch_return(batch)
            raise
        _batch_forget(batch)
        _batch_tell(batch)

    def _headers_missing(self, batch: _Batch) -> None:
        """A batch failed on a header it cannot see: hold that log's lines back, drop them when it never comes."""
        log_ids = {item.log_id for item in batch.lines} | {log.log_file.pk for log in batch.closing}
        present = set(ExecutionLogFile.objects.filter(pk__in=log_ids).values_list("pk", flat=True))
        now = time.monotonic()
        with _logs.lock:
            for log_id in log_ids - present:
                log = _logs.logs.get(log_id)
                if log is None:
                    continue
                if log.header_missing_since is None:
                    log.header_missing_since = now
                elif now - log.header_missing_since > HEADER_WAIT_SECONDS:
                    logger.warning("dropped %d lines of log %s: its attempt is not in the database",
                                   len(log.pending), log_id)
                    _logs.waiting -= len(log.pending)
                    for event in log.closes:
                        event.set()
                    _logs.logs.pop(log_id)


_writer = _Writer()


def _forget_after_fork() -> None:
    # A forked child (a Celery prefork process) inherits the queues and the lock, but not the thread.
    global _logs, _writer, _tell_lock
    _logs = _Logs()
    _writer = _Writer()
    _tell_lock = threading.RLock()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(lambda: log_writer_stop(timeout=5.0))
