"""A drain that fails leaves nothing of its transaction behind: the writer's next drain starts on a clean
connection, so what it stores is committed, not written into a transaction nobody commits.

A failed drain's transaction is rolled back, and Django then turns autocommit back on. When that last step
fails too (the connection broke under it, or a test harness blocks the database between two tests), the
connection is left with autocommit off, and every later ``atomic()`` on it would skip its commit."""

from __future__ import annotations

import threading

import pytest
from django.db import IntegrityError
from django.db.backends.base.base import BaseDatabaseWrapper

from graphs.logs import writer
from graphs.logs.store import log_append, log_file_open, log_writes_wait
from graphs.models import ExecutionLogLine
from tests import factories
from tests.celery_worker import wait_until


@pytest.mark.django_db(transaction=True)
def test_lines_after_a_drain_whose_cleanup_failed_are_committed(task, monkeypatch):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    real_store, real_set_autocommit = writer._batch_store, BaseDatabaseWrapper.set_autocommit
    failing, refused = threading.Event(), threading.Event()

    def store_failing_once(batch):
        if not failing.is_set():
            failing.set()
            raise IntegrityError("a line's log header is not in the database")
        real_store(batch)

    def set_autocommit_refused_once(self, autocommit, *args, **kwargs):
        in_writer = threading.current_thread().name == "log-writer"
        if autocommit and in_writer and failing.is_set() and not refused.is_set():
            refused.set()
            raise RuntimeError("database access not allowed")
        return real_set_autocommit(self, autocommit, *args, **kwargs)

    monkeypatch.setattr(writer, "RETRY_FIRST_SECONDS", 0.01)
    monkeypatch.setattr(writer, "_batch_store", store_failing_once)
    monkeypatch.setattr(BaseDatabaseWrapper, "set_autocommit", set_autocommit_refused_once)
    for n in range(20):
        log_append(execution=execution, event="agent_output", text=f"line {n}")

    assert log_writes_wait(timeout=30)
    assert refused.is_set(), "the failed drain's cleanup never ran"
    # Read on this test's own connection: only committed lines are seen here.
    wait_until(
        lambda: ExecutionLogLine.objects.filter(log_file_id=execution.pk).count() == 20,
        timeout=30,
        message=lambda: f"{ExecutionLogLine.objects.filter(log_file_id=execution.pk).count()} of 20 lines committed",
    )
    stored = ExecutionLogLine.objects.filter(log_file_id=execution.pk).order_by("seq").values_list("seq", flat=True)
    assert list(stored) == list(range(1, 21))
