"""Transactions whose commit need not wait for the database's disk.

A PostgreSQL commit waits until its WAL is flushed (``synchronous_commit``), which can be
the largest single cost of a quick node. Some writes may be lost in a database crash without harm,
because the engine redoes or re-derives them; their transactions turn the wait off for themselves
alone (``SET LOCAL``). A crash may lose the last of them, never corrupt or reorder anything.

Used for a claim (lost, the attempt is queued again and the reaper hands it out; the claimer's
finish, conditional on still owning the row, records nothing) and for the log writer's drains (lost,
the lines of the last moment before the crash are missing, a gap readers pass over; a close mark
lost leaves the log for the reaper). Never for a result, a scheduling decision or anything a person did.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def transaction_unflushed() -> Iterator[None]:
    """``transaction.atomic()``, committed without waiting for the disk, on PostgreSQL.

    Inside a caller's transaction it adds nothing, not even a savepoint (two round trips): the writes
    are the caller's, and its commit decides how they are flushed."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield
