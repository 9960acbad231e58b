"""Durable JSONL execution logs.

Every line is ``{"seq": n, "ts": ..., "event": ..., ...}``. The file is the source of truth: a line is
written and flushed before anyone is told about it, and ``seq`` is taken from the file itself under an
exclusive lock, so it keeps increasing across processes and worker restarts and is never reused.

Paths are built only from primary keys (UUIDs), never from names that come in from outside, so a log
file cannot land outside ``WORKGRAPH_LOG_DIR``.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from graphs.models import ExecutionLogFile, WorkNodeExecution
from graphs.transactions import transaction_unflushed

logger = logging.getLogger(__name__)

LogLine = dict[str, Any]

# Readers refuse to parse a single line longer than this; a runaway agent line is cut when written.
MAX_LINE_TEXT = 64_000

_listeners: list[Callable[[WorkNodeExecution, LogLine], None]] = []
_close_listeners: list[Callable[[WorkNodeExecution, int], None]] = []
_append_locks: dict[str, threading.Lock] = {}
_append_locks_guard = threading.Lock()


def log_listener_register(listener: Callable[[WorkNodeExecution, LogLine], None]) -> None:
    """Call ``listener(execution, line)`` after every line is durably written (used to publish live)."""
    if listener not in _listeners:
        _listeners.append(listener)


def log_close_listener_register(listener: Callable[[WorkNodeExecution, int], None]) -> None:
    """Call ``listener(execution, last_seq)`` once, when the log is marked closed."""
    if listener not in _close_listeners:
        _close_listeners.append(listener)


def log_root() -> Path:
    return Path(settings.WORKGRAPH_LOG_DIR)


def log_path_for(log_file: ExecutionLogFile) -> Path:
    """Return the absolute path of a log file, refusing any stored path that escapes the log root."""
    # Resolving walks the path with a stat per component; a node's half-dozen lines reuse the answer.
    key = (settings.WORKGRAPH_LOG_DIR, log_file.file_path)
    cached = getattr(log_file, "_path_cache", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    root = log_root().resolve()
    path = (root / log_file.file_path).resolve()
    if not path.is_relative_to(root):
        raise ValueError(f"log file path {log_file.file_path!r} escapes the log directory")
    log_file._path_cache = (key, path)
    return path


def log_file_open(*, execution: WorkNodeExecution) -> ExecutionLogFile:
    """Create the log file of ``execution`` (idempotent) and return its row, kept on ``execution``."""
    log_file = log_file_create(node_exec_id=execution.pk, project_id=execution.run.task.project_id,
                               run_id=execution.run_id)
    execution._log_file_cache = log_file
    return log_file


def log_file_create(*, node_exec_id: Any, project_id: Any, run_id: Any) -> ExecutionLogFile:
    """Create the log file of an attempt known by its ids (idempotent) and return its row.

    The row's id is the attempt's, so it is known whether this INSERT or an earlier one made the row:
    ``INSERT … ON CONFLICT DO NOTHING`` is then one statement, where get_or_create takes four, and
    inside a caller's transaction it needs no savepoint (two more round trips) to survive a duplicate.
    """
    log_file = ExecutionLogFile(
        log_file_id=node_exec_id,
        node_exec_id=node_exec_id,
        project_id=project_id,
        file_path=str(Path(str(project_id)) / str(run_id) / f"{node_exec_id}.jsonl"),
    )
    ExecutionLogFile.objects.bulk_create([log_file], ignore_conflicts=True)
    path = log_path_for(log_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(exist_ok=True)
    return log_file


def log_append(*, execution: WorkNodeExecution, event: str, **fields: Any) -> LogLine:
    """Append one line to the execution's log, flush it, then tell the listeners. Returns the line."""
    log_file = _log_file_of(execution)
    path = log_path_for(log_file)
    for key in ("text", "message"):
        if isinstance(fields.get(key), str) and len(fields[key]) > MAX_LINE_TEXT:
            fields[key] = fields[key][:MAX_LINE_TEXT] + " …[cut]"
    with _append_lock(path):
        line = _append_under_lock(path, event=event, fields=fields)
    _notify(_listeners, execution, line)
    return line


def log_file_close(*, execution: WorkNodeExecution) -> None:
    """Mark the log closed and record its last seq (kept off the per-line path to spare the database).

    Inside a caller's transaction the mark is part of it: a node's result and its log's close commit
    together, and the watchers are told once they have.
    """
    log_file = _log_file_of(execution)
    with open(log_path_for(log_file), "rb") as handle:
        os.fsync(handle.fileno())
        last_seq = _last_seq(handle)
    # The mark need not wait for the database's disk: the file itself was just synced, and a mark a
    # crash loses only leaves readers polling a file that no longer grows (see graphs.transactions).
    with transaction_unflushed():
        closed = ExecutionLogFile.objects.filter(
            node_exec_id=execution.pk, status=ExecutionLogFile.Status.OPEN
        ).update(status=ExecutionLogFile.Status.CLOSED, closed_at=timezone.now(), last_seq=last_seq)
    if closed:
        transaction.on_commit(lambda: _notify(_close_listeners, execution, last_seq))


def log_file_close_soon(*, execution: WorkNodeExecution) -> None:
    """Close the log like ``log_file_close``, but on this process's closer thread, while the caller goes on.

    For a worker that runs a chain's next node as soon as it has recorded this one's result: the
    fsync and the close mark are then no longer on the chain's path. Meanwhile the attempt shows
    finished and its log open, which readers handle as they do a log still being written. Inside a
    transaction the caller does not end here (a test's, say), the closer's connection could not see
    the rows: the log is closed at once, in that transaction.
    """
    if connection.in_atomic_block:
        log_file_close(execution=execution)
    else:
        _closer.put(execution)


def log_closes_wait(timeout: float = 30.0) -> bool:
    """Wait until the closer thread has closed every log handed to it; return whether it has.

    A job that handed logs over calls this before it ends, so none is left behind when its process
    stops. A log the closer could not close (its database away for longer than the timeout) stays
    open for the reaper, which closes the logs of finished attempts (``logs_left_open_close``).
    """
    return _closer.wait_idle(timeout)


def logs_left_open_close(*, finished_before: datetime) -> int:
    """Close the logs still open of attempts that finished before ``finished_before``; return how many.

    A worker killed between committing a result and its closer thread closing the log leaves one
    behind. A log whose file is not on this machine's disk is left for a reaper where it is.
    """
    left_open = ExecutionLogFile.objects.filter(
        status=ExecutionLogFile.Status.OPEN, node_exec__finished_at__lt=finished_before
    ).exclude(node_exec__status__in=WorkNodeExecution.ACTIVE_STATUSES).select_related("node_exec")
    closed = 0
    for log_file in left_open:
        execution = log_file.node_exec
        execution._log_file_cache = log_file
        try:
            log_file_close(execution=execution)
        except FileNotFoundError:
            logger.warning("log %s of a finished attempt is open and not on this machine", log_file.file_path)
            continue
        closed += 1
    return closed


def log_read(*, log_file: ExecutionLogFile, after: int = 0, limit: int | None = None) -> list[LogLine]:
    """Return the lines with ``seq > after`` in order, at most ``limit`` of them."""
    lines: list[LogLine] = []
    for line in _iter_lines(log_path_for(log_file)):
        if line["seq"] > after:
            lines.append(line)
            if limit is not None and len(lines) >= limit:
                break
    return lines


def log_read_from(
    *, log_file: ExecutionLogFile, offset: int = 0, after: int = 0, limit: int | None = None
) -> tuple[list[LogLine], int]:
    """Read complete lines from byte ``offset`` on; return those with ``seq > after`` and the next offset.

    A reader that keeps the returned offset parses each byte of the file once however often it reads,
    and a file that has not grown past ``offset`` costs one ``stat``. A line still being written is
    left for the next read; at most ``limit`` lines are returned, the offset stopping right after them.
    """
    path = log_path_for(log_file)
    try:
        if path.stat().st_size <= offset:
            return [], offset
    except FileNotFoundError:
        return [], offset
    lines: list[LogLine] = []
    with open(path, "rb") as handle:
        handle.seek(offset)
        for raw in handle:
            if not raw.endswith(b"\n"):
                break
            offset += len(raw)
            line = _parse(raw)
            if line is not None and line["seq"] > after:
                lines.append(line)
                if limit is not None and len(lines) >= limit:
                    break
    return lines, offset


def log_last_seq(*, log_file: ExecutionLogFile) -> int:
    """Return the seq of the last complete line in the file (0 for an empty or missing file).

    Reads only the end of the file. A reader takes no lock, so a line still being written at the end
    is skipped rather than parsed; the window grows only when the last lines are that long.
    """
    try:
        handle = open(log_path_for(log_file), "rb")
    except FileNotFoundError:
        return 0
    with handle:
        end = handle.seek(0, os.SEEK_END)
        window = 8192
        while True:
            start = max(0, end - window)
            handle.seek(start)
            chunk = handle.read(end - start)
            complete = chunk[: chunk.rfind(b"\n") + 1].split(b"\n")[:-1]
            for raw in reversed(complete[1:] if start else complete):  # the first may be cut by the window
                line = _parse(raw)
                if line is not None:
                    return line["seq"]
            if start == 0:
                return 0
            window *= 4


def _notify(listeners: list[Callable[..., None]], *args: Any) -> None:
    for listener in list(listeners):
        try:
            listener(*args)
        except Exception:
            # The line is already durable; a failing live listener must not fail the work that wrote it.
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


def _append_lock(path: Path) -> threading.Lock:
    # flock is per open file description, so threads of one process need their own lock on top.
    key = str(path)
    with _append_locks_guard:
        return _append_locks.setdefault(key, threading.Lock())


def _append_under_lock(path: Path, *, event: str, fields: dict[str, Any]) -> LogLine:
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            line: LogLine = {"seq": _last_seq(handle) + 1, "ts": _now_iso(), "event": event, **fields}
            end = handle.seek(0, os.SEEK_END)
            if end and _last_byte(handle, end) != b"\n":
                handle.write(b"\n")  # seal a line torn by a crash so the new one stands alone
            handle.write(json.dumps(line, ensure_ascii=False, default=str).encode() + b"\n")
            # Flushed to the OS before anyone is told: a crashed worker loses nothing. The fsync that
            # also survives a power cut is paid once, when the log closes, not on every line.
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return line


def _last_seq(handle) -> int:
    """Read the seq of the last complete line by scanning back from the end of the file."""
    end = handle.seek(0, os.SEEK_END)
    if end == 0:
        return 0
    block = 4096
    position = end
    tail = b""
    while position > 0:
        step = min(block, position)
        position -= step
        handle.seek(position)
        tail = handle.read(step) + tail
        complete = tail.rstrip(b"\n")
        newline = complete.rfind(b"\n")
        if newline != -1 or position == 0:
            last = complete[newline + 1 :]
            try:
                return int(json.loads(last)["seq"])
            except (ValueError, KeyError, TypeError):
                # A torn last line (a crash mid-write) carries no seq: count the lines instead.
                return _count_seq(handle)
    return 0


def _last_byte(handle, end: int) -> bytes:
    handle.seek(end - 1)
    byte = handle.read(1)
    handle.seek(0, os.SEEK_END)
    return byte


def _count_seq(handle) -> int:
    handle.seek(0)
    highest = 0
    for raw in handle:
        try:
            highest = max(highest, int(json.loads(raw)["seq"]))
        except (ValueError, KeyError, TypeError):
            continue
    return highest


def _iter_lines(path: Path) -> Iterator[LogLine]:
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break  # a line still being written: it will be read next time
            line = _parse(raw)
            if line is not None:
                yield line


def _parse(raw: bytes) -> LogLine | None:
    try:
        line = json.loads(raw)
    except ValueError:
        return None
    return line if isinstance(line, dict) and isinstance(line.get("seq"), int) else None


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Closer:
    """The thread that closes the logs ``log_file_close_soon`` hands over, in order, one per process."""

    def __init__(self) -> None:
        self._waiting: deque[WorkNodeExecution] = deque()
        self._closing = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def put(self, execution: WorkNodeExecution) -> None:
        with self._changed:
            self._waiting.append(execution)
            if self._thread is None:
                self._thread = threading.Thread(target=self._close_forever, name="log-closer", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: not self._waiting and not self._closing, timeout)

    def _close_forever(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._waiting)
                execution = self._waiting.popleft()
                self._closing = True
            try:
                _close_retrying(execution)
            finally:
                with self._changed:
                    self._closing = False
                    self._changed.notify_all()


def _close_retrying(execution: WorkNodeExecution) -> None:
    """Close a log on the closer's own connection; one dropped connection costs a reconnect, not the close."""
    for attempt in range(2):
        try:
            log_file_close(execution=execution)
            return
        except (OperationalError, InterfaceError):
            connection.close()
            if attempt:
                logger.warning("log of attempt %s left open for the reaper: no database", execution.pk)
        except Exception:
            logger.exception("closing the log of attempt %s failed; left open for the reaper", execution.pk)
            return


_closer = _Closer()


def _forget_after_fork() -> None:
    # A forked child (a Celery prefork process) inherits the queue and condition but not the thread.
    global _closer
    _closer = _Closer()


os.register_at_fork(after_in_child=_forget_after_fork)
