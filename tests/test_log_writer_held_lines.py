"""Lines held back for a header not yet committed: the writer cannot store lines another thread appends to a
log whose header a caller's transaction made and has not committed. It holds them back, and the commit of
that transaction lets them go at once, so a job's ``log_writes_wait`` waits for them; a rollback leaves them
held until they are dropped."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from graphs.logs import writer
from graphs.logs.store import log_append, log_file_open, log_writes_wait
from graphs.models import ExecutionLogLine
from tests import factories
from tests.celery_worker import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # On SQLite the writer's INSERT waits for the transaction's write lock instead of failing on the header.
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a header unseen fails the writer on PostgreSQL"),
]


def _held(log_id: object) -> bool:
    with writer._logs.lock:
        log = writer._logs.logs.get(log_id)
        return log is not None and log.header_missing_since is not None


def test_the_commit_of_a_header_lets_the_lines_held_back_for_it_go_and_log_writes_wait_waits_for_them(task):
    with transaction.atomic():
        execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
        log_file_open(execution=execution)
        # As an agent's output reader does, on a thread of its own, outside the caller's transaction.
        reader = threading.Thread(
            target=lambda: [log_append(execution=execution, event="agent_output", text=f"line {n}") for n in range(5)]
        )
        reader.start()
        reader.join(timeout=30)
        wait_until(lambda: _held(execution.pk), timeout=30, message=lambda: "the writer never held the log back")

    assert not _held(execution.pk)
    assert log_writes_wait(timeout=30)
    stored = ExecutionLogLine.objects.filter(log_file_id=execution.pk).order_by("seq").values_list("seq", flat=True)
    assert list(stored) == [1, 2, 3, 4, 5]


def test_a_header_that_never_commits_keeps_its_lines_held_until_they_are_dropped(task, monkeypatch):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    with pytest.raises(RuntimeError), transaction.atomic():
        doomed = factories.ExecutionFactory(run=execution.run, node_id="doomed", status="running")
        log_file_open(execution=doomed)
        reader = threading.Thread(target=lambda: log_append(execution=doomed, event="agent_output", text="lost"))
        reader.start()
        reader.join(timeout=30)
        wait_until(lambda: _held(doomed.pk), timeout=30, message=lambda: "the writer never held the log back")
        raise RuntimeError("the caller's transaction rolls back")

    assert _held(doomed.pk)
    assert log_writes_wait(timeout=30)
    assert not ExecutionLogLine.objects.filter(log_file_id=doomed.pk).exists()
    monkeypatch.setattr(writer, "HEADER_WAIT_SECONDS", 0.0)
    wait_until(lambda: doomed.pk not in writer._logs.logs, timeout=30,
               message=lambda: "the held lines were never dropped")
