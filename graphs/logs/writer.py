"""The writer: this process's thread that stores the numbered lines, one COPY or INSERT per drain.

``log_append`` queues a line here and returns at once; the writer's thread drains the queue with one
statement per drain (``rows``: COPY on PostgreSQL, INSERT on SQLite; the lines of every log that came
in meanwhile, as numbering encoded them) and only then tells the listeners
(the live path). So a line anyone was shown is in the store. A drain that starts right after the
previous one first waits ``DRAIN_WINDOW_SECONDS`` for more lines, so a process killed mid-stream
loses the lines of that window and of the statement under way, never more — and no reader saw them, as
nothing unwritten is published.

Inside a transaction a line is written at once, in that transaction (one INSERT; ``transacted``): the
writer's own connection could not see rows the transaction made, and on SQLite it would queue behind
the transaction's write lock while the transaction waited for it.

Two processes writing one log at the same moment meet on the unique (log, seq); the one that loses
renumbers the lines it has not written yet, before anyone was told of them.

This module holds the process's log state (``_logs``, ``_writer``, ``_tell_lock``, the listeners). A
forked child gets new ones, so other modules read them through the module, never import them by name.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, InterfaceError, OperationalError, connection
from django.utils import timezone

from graphs.logs.numbering import LogLine, _Line, _Log, _Logs, _stored_tail, log_line_text
from graphs.logs.rows import _lines_insert
from graphs.metrics.counters import log_lines_stored_count
from graphs.models import ExecutionLogFile, WorkNodeExecution
from graphs.transactions import transaction_unflushed

logger = logging.getLogger(__name__)

# A drain that starts this soon after the previous one waits this long for more lines to come with it.
DRAIN_WINDOW_SECONDS = 0.02
# At most this many lines go in one INSERT (or COPY).
MAX_DRAIN_LINES = 2000
# Past this many lines waiting to be written (the database away), appends outside a transaction wait.
MAX_WAITING_LINES = 200_000
# Lines of a log whose header this process cannot see (its transaction never committed) are
# dropped, with a warning, after this long.
HEADER_WAIT_SECONDS = 60.0
HEADER_RETRY_SECONDS = 0.5
# A writer with nothing to write this long closes its database connection (opened again on the next line).
IDLE_SECONDS = 10.0
# A writer that cannot reach the database tries again after this long, doubling up to the cap.
RETRY_FIRST_SECONDS = 0.1
RETRY_CAP_SECONDS = 5.0

_listeners: list[Callable[[WorkNodeExecution, LogLine], None]] = []
_close_listeners: list[Callable[[WorkNodeExecution, int], None]] = []
_logs = _Logs()
_tell_lock = threading.RLock()


def _notify(listeners: list[Callable[..., None]], *args: Any) -> None:
    for listener in list(listeners):
        try:
            listener(*args)
        except Exception:
            # The line is already stored; a failing live listener must not fail the work that wrote it.
            logger.exception("log listener %r failed", listener)


@dataclass
class _Batch:
    lines: list[_Line]
    closing: list[_Log]


def _batch_take(*, limit: int, only: Any = None, close: bool = False, held: bool = False) -> _Batch:
    """Take lines to write (all of one log with ``only``) and the closes that may go with them.

    A log closes with the batch that takes its last lines, once no other batch holds lines of it.
    The writer's batches (not ``only``) stop at a line numbered in a caller's transaction.
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
                if only is None and log.pending[0].transacted:
                    # Numbered in a caller's transaction, which stores it next (``transacted``): stored
                    # here, on the writer's connection, it would outlive that transaction's rollback.
                    break
                item = log.pending.popleft()
                log.in_flight.append(item)
                lines.append(item)
            if (log.closes or close) and not log.pending and (only is not None or before == 0):
                closing.append(log)
    return _Batch(lines=lines, closing=closing)


def _batch_store(batch: _Batch) -> None:
    """Store the batch's lines in one statement (``rows``) and mark its closes, in the current transaction."""
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
    log_lines_stored_count(len(batch.lines))
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
                text, cut, size, _ = log_line_text(item.line)
                log.size += size - item.size
                item.text, item.cut, item.size = text, item.cut or cut, size
            log.next_seq = last + 1
    logger.info("renumbered %d log lines another process had numbered alike", len(conflicted))


class _Writer:
    """The thread that drains this process's lines into the database, one COPY or INSERT per drain."""

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
                # Its transaction's end may have failed part way, leaving autocommit off: every later
                # atomic() on this connection would then skip its commit, and its lines be lost unseen.
                connection.close()
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
                if log is None or log.header_seen:
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


def header_committed(log_id: Any) -> None:
    """The caller's transaction that made log ``log_id``'s header committed: what the writer held back
    for that header goes in its next drain, and ``log_writes_wait`` waits for it."""
    with _logs.lock:
        log = _logs.logs.get(log_id)
        if log is None:
            return
        log.header_seen = True
        held = log.header_missing_since is not None
        log.header_missing_since = None
    if held:
        _writer.wake(block=False)


def _forget_after_fork() -> None:
    # A forked child (a Celery prefork process) inherits the queues and the lock, but not the thread.
    global _logs, _writer, _tell_lock
    _logs = _Logs()
    _writer = _Writer()
    _tell_lock = threading.RLock()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(lambda: _writer.stop(timeout=5.0))
