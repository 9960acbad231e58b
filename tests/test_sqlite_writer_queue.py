"""The embedded mode's SQLite backend queues a process's write transactions on one lock, and always
gives it back: on commit, on rollback, and when a connection closes in the middle of one."""

from __future__ import annotations

import threading

import pytest
from django.db.utils import ConnectionHandler

from console.sqlite import base

TIMEOUT = 10


@pytest.fixture
def connections(tmp_path, django_db_blocker):
    """Connections of their own to a file of their own, whatever database the suite runs on."""
    handler = ConnectionHandler(
        {"default": {"ENGINE": "console.sqlite", "NAME": str(tmp_path / "queue.sqlite3"),
                     "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30}}}
    )
    with django_db_blocker.unblock():
        with handler["default"].cursor() as cursor:
            cursor.execute("CREATE TABLE written (who TEXT)")
        yield handler
        handler.close_all()


def _begin(connection) -> None:
    connection.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)


def _end(connection, *, commit: bool) -> None:
    connection.commit() if commit else connection.rollback()
    connection.set_autocommit(True)


@pytest.mark.parametrize("commit", [True, False], ids=["commit", "rollback"])
def test_a_write_transaction_holds_the_lock_until_it_ends(connections, commit):
    connection = connections["default"]
    _begin(connection)
    assert base._writer.locked()
    _end(connection, commit=commit)
    assert not base._writer.locked()


def test_a_connection_closed_mid_transaction_gives_the_lock_back(connections):
    connection = connections["default"]
    _begin(connection)
    connection.close()
    assert not base._writer.locked()


def test_the_next_writer_goes_in_when_the_first_commits(connections):
    first = connections["default"]
    _begin(first)
    first.cursor().execute("INSERT INTO written VALUES ('first')")
    began = threading.Event()

    def second_writer() -> None:
        second = connections["default"]  # this thread's own connection to the same file
        _begin(second)
        began.set()
        second.cursor().execute("INSERT INTO written VALUES ('second')")
        _end(second, commit=True)
        second.close()

    thread = threading.Thread(target=second_writer)
    thread.start()
    assert not began.wait(0.2)  # queued behind the open transaction
    _end(first, commit=True)
    thread.join(TIMEOUT)
    assert began.is_set() and not thread.is_alive()
    with first.cursor() as cursor:
        cursor.execute("SELECT who FROM written ORDER BY rowid")
        assert [row[0] for row in cursor.fetchall()] == ["first", "second"]
    assert not base._writer.locked()
