"""Lines written in a caller's transaction: stored in it, told when it commits, written again when it rolls back.

Inside a transaction a line is stored at once, in that transaction, with the lines of its log still
waiting for the writer (``writer``). A transaction that rolls back would take them all with it, and
leave their numbers unused: the log's later lines would follow a gap, and lines that told of what did
happen, numbered before the transaction, would be lost. So before the thread that wrote them numbers
that log's next line, or closes it, the lines of each of its transactions that rolled back meanwhile go
back to the writer with their numbers: those numbered before the transaction as they were, those
numbered in it marked ``rolled_back`` — what they told of did not happen.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from graphs.logs import writer
from graphs.logs.numbering import log_line_text


@dataclass(eq=False)
class _Written:
    """One caller's transaction's write of one log's lines; called once that transaction commits."""

    log_id: Any
    batch: writer._Batch
    thread: int
    committed: bool = False

    def __call__(self) -> None:
        self.committed = True
        _forget(self)
        writer._batch_tell(self.batch)


_written: dict[Any, list[_Written]] = {}
_lock = threading.Lock()


def caller_transaction_write(log_id: Any, *, close: bool = False) -> None:
    """Store the unwritten lines of one log (and close it) in the caller's transaction; tell on commit."""
    batch = writer._batch_take(limit=writer.MAX_WAITING_LINES, only=log_id, close=close)  # all of them, in order
    try:
        writer._batch_store(batch)
    except BaseException:
        # Not stored in the transaction: the writer stores them (it leaves a line marked transacted alone).
        for item in batch.lines:
            item.transacted = False
        writer._batch_return(batch)
        raise
    writer._batch_forget(batch)
    written = _Written(log_id=log_id, batch=batch, thread=threading.get_ident())
    with _lock:
        _written.setdefault(log_id, []).append(written)
    transaction.on_commit(written)


def rolled_back_return(log_id: Any) -> None:
    """Hand the writer back the lines of log ``log_id`` that this thread's transactions stored and then rolled
    back (their commit hook neither ran nor waits any more); each keeps its number."""
    me = threading.get_ident()
    with _lock:
        mine = [written for written in _written.get(log_id, ()) if written.thread == me]
    if not mine:
        return
    # A rollback, of the transaction or of a savepoint within it, drops the hooks registered in it.
    waiting = {id(hook) for _, hook, _ in connection.run_on_commit}
    for written in mine:
        if not written.committed and id(written) not in waiting:
            _forget(written)
            _lines_return(written.batch)
    if not connection.in_atomic_block:
        writer._writer.wake(block=False)


def _lines_return(batch: writer._Batch) -> None:
    logs = writer._logs
    with logs.lock:
        for item in batch.lines:
            if item.transacted:
                text, cut, size, line = log_line_text({**item.line, "rolled_back": True})
                item.log.size += size - item.size
                item.line, item.text, item.cut, item.size, item.transacted = line, text, item.cut or cut, size, False
            # The log is gone from this process when the rolled-back batch closed it: it is open again.
            log = logs.logs.setdefault(item.log_id, item.log)
            log.next_seq = max(log.next_seq, item.log.next_seq)
            item.log = log
            log.pending = deque(sorted([*log.pending, item], key=lambda pending: pending.line["seq"]))
            logs.waiting += 1
        logs.lock.notify_all()


def _forget(written: _Written) -> None:
    with _lock:
        left = [other for other in _written.get(written.log_id, ()) if other is not written]
        if left:
            _written[written.log_id] = left
        else:
            _written.pop(written.log_id, None)


def _forget_after_fork() -> None:
    # A forked child runs none of its parent's transactions.
    global _written, _lock
    _written = {}
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
