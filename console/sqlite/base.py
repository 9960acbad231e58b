"""SQLite for the embedded mode: one write transaction at a time per process, queued on a lock.

The embedded mode's worker threads and the server share one database file, and SQLite lets one
writer in at a time. A writer that finds the file locked waits in SQLite's busy handler, which polls
by sleeping (1, 2, 5, 10… ms): with four node threads committing every few milliseconds, those sleeps
cost more than the writes. Here a write transaction (``BEGIN IMMEDIATE``) first takes a lock shared
by the process's connections, and the next writer wakes the moment the previous one commits. The
busy handler still covers writers in other processes (a management command beside the server).

A writer that cannot get the lock within ``WRITER_WAIT_SECONDS`` goes on without it, to SQLite's own
waiting: the lock may speed writers up, never add a way to hang.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db.backends.sqlite3 import base

WRITER_WAIT_SECONDS = 30.0
_writer = threading.Lock()


class DatabaseWrapper(base.DatabaseWrapper):
    _holds_writer = False

    def _start_transaction_under_autocommit(self) -> None:
        self._holds_writer = _writer.acquire(timeout=WRITER_WAIT_SECONDS)
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._writer_release()
            raise

    def _commit(self) -> None:
        self._ending(super()._commit)

    def _rollback(self) -> None:
        self._ending(super()._rollback)

    def _close(self) -> None:
        self._ending(super()._close)

    def _ending(self, end: Callable[[], None]) -> None:
        """End the transaction (or the connection) and give the lock back, whatever ``end`` raises."""
        try:
            end()
        finally:
            self._writer_release()

    def _writer_release(self) -> None:
        if self._holds_writer:
            self._holds_writer = False
            _writer.release()
