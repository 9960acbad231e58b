"""Execution logs, stored in the database: opening, appending, closing and reading an attempt's log.

A line is ``{"seq": n, "ts": ..., "event": ..., ...fields}``. Its JSON text — exactly what download
and export produce — is an ``ExecutionLogLine`` row; ``ExecutionLogFile`` is the log's header. The
database is the store in every mode, so any console process on any machine serves any log, and the
lines ride on the same distributed parts as everything else.

``log_append`` numbers the line (``numbering``) and hands it to this process's writer (``writer``),
which stores it and only then tells the listeners. ``logs_prune`` deletes the lines of old logs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Max, Sum
from django.utils import timezone

from graphs.logs import rows, transacted, writer
from graphs.logs.numbering import LogLine, _line_size
from graphs.models import ExecutionLogFile, ExecutionLogLine, WorkNodeExecution

logger = logging.getLogger(__name__)

# How long ``log_file_close`` waits for the writer to store the log's last lines and close it.
CLOSE_WAIT_SECONDS = 30.0


def log_listener_register(listener: Callable[[WorkNodeExecution, LogLine], None]) -> None:
    """Call ``listener(execution, line)`` once each line is stored (used to publish live)."""
    if listener not in writer._listeners:
        writer._listeners.append(listener)


def log_close_listener_register(listener: Callable[[WorkNodeExecution, int], None]) -> None:
    """Call ``listener(execution, last_seq)`` once, when the log is marked closed."""
    if listener not in writer._close_listeners:
        writer._close_listeners.append(listener)


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
    created = rows._insert_ignoring_conflicts(ExecutionLogFile, [log_file], conflict=["log_file_id"])
    return log_file_inserted(node_exec_id=node_exec_id, project_id=project_id, created=bool(created))


def log_file_inserted(*, node_exec_id: Any, project_id: Any, created: bool) -> ExecutionLogFile:
    """The header of the log of an attempt known by its ids, which the caller's statement has just
    inserted as ``log_file_create`` does (``created``), or found there; the writer is told as it is there."""
    log_file = ExecutionLogFile(log_file_id=node_exec_id, node_exec_id=node_exec_id, project_id=project_id)
    if created:
        writer._logs.fresh(log_file.pk)
        if connection.in_atomic_block:
            # Until this commits, the writer cannot see the header, and holds back the lines another
            # thread appends meanwhile; the commit lets them go at once instead of at its next try.
            transaction.on_commit(partial(writer.header_committed, log_file.pk))
    return log_file


def log_append(*, execution: WorkNodeExecution, event: str, **fields: Any) -> LogLine | None:
    """Number one line of the execution's log and hand it to the writer; return it.

    Returns None for agent output past the line cap (counted, not kept).
    """
    log_file = _log_file_of(execution)
    transacted.rolled_back_return(log_file.pk)
    in_transaction = connection.in_atomic_block
    line = writer._logs.number(log_file, execution, event=event, fields=fields, transacted=in_transaction)
    if line is None:
        return None
    if in_transaction:
        transacted.caller_transaction_write(log_file.pk)
    else:
        writer._writer.wake(block=True)
    return line.line


def log_file_close(*, execution: WorkNodeExecution) -> None:
    """Store the log's last lines and mark it closed, with its counts; then tell the close listeners.

    Inside a caller's transaction both are part of it (a node's result and its log's close commit
    together). Outside one, the writer does it and this waits up to ``CLOSE_WAIT_SECONDS``; a log it
    could not close (the database away) stays open for the reaper (``logs_left_open_close``).
    """
    log_file = _log_file_of(execution)
    transacted.rolled_back_return(log_file.pk)
    if connection.in_atomic_block:
        transacted.caller_transaction_write(log_file.pk, close=True)
        return
    done = writer._logs.close_request(log_file, execution)
    writer._writer.wake(block=False)
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
    log_file = _log_file_of(execution)
    transacted.rolled_back_return(log_file.pk)
    writer._logs.close_request(log_file, execution)
    writer._writer.wake(block=False)


def log_writes_wait(timeout: float = 30.0) -> bool:
    """Wait until every line and close handed to this process's writer is stored; return whether it is.

    A job calls this before it ends, so nothing is left in memory when its process stops. Lines held
    back for an attempt this process cannot see in the database are not waited for (see
    ``writer.HEADER_WAIT_SECONDS``). Inside a transaction it does not wait at all, and says whether all is
    stored: on SQLite the writer may need the write lock that transaction holds.
    """
    return writer._writer.wait_idle(0 if connection.in_atomic_block else timeout)


def log_writer_stop(timeout: float = 30.0) -> bool:
    """Store what this process's writer holds, then end its thread and close its database connection.

    Called as the process exits; returns whether everything was stored. The next line starts it again.
    """
    return writer._writer.stop(timeout)


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
        if writer._logs.unwritten(log_file.pk):
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
            writer._notify(writer._close_listeners, log_file.node_exec, last_seq)
    return closed


def log_read(*, log_file: ExecutionLogFile, after: int = 0, limit: int | None = None) -> list[LogLine]:
    """Return the lines with ``seq > after`` in seq order, at most ``limit`` of them.

    Lines this process has numbered and not stored yet are included, so a writer reads what it wrote.
    They are taken before the stored lines are read: a line the writer commits in between is then in
    one or both (once in the answer), where taken after it could be in neither.
    """
    unwritten = [line for line in writer._logs.unwritten(log_file.pk) if line["seq"] > after]
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

