"""Closing logs: a worker that goes on with a chain's next node leaves the finished node's log to the
log writer; a log closes with its counts wherever it is closed, a close in the caller's transaction
storing the lines the writer had to hold back; the reaper closes what a killed worker left open."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import OperationalError, transaction
from django.utils import timezone

from graphs.engine import executions_reap, run_start
from graphs.logs import writer
from graphs.logs.store import log_append, log_file_close, log_file_close_soon, log_file_open, log_read, log_writes_wait
from graphs.models import ExecutionLogFile, ExecutionLogLine, WorkGraphRun
from tests import factories
from tests.celery_worker import wait_until
from tests.run_builders import edges_for, latest, node, planned_run


def _chain(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


@pytest.fixture
def execution(task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="succeeded")
    log_file_open(execution=execution)
    return execution


@pytest.fixture
def closes(monkeypatch) -> list[tuple[str, int, str]]:
    """Every log close as (node id, last seq, the thread that made it)."""
    seen: list[tuple[str, int, str]] = []
    lock = threading.Lock()

    def record(execution, last_seq: int) -> None:
        with lock:
            seen.append((execution.node_id, last_seq, threading.current_thread().name))

    monkeypatch.setattr(writer, "_close_listeners", [record])
    return seen


@pytest.mark.django_db(transaction=True)
def test_a_chain_closes_each_handed_over_log_on_the_log_writer_before_its_job_ends(
    task, scripted_runner, inline_executor, closes
):
    run = planned_run(task, _chain(4))
    run_start(run=run)
    assert inline_executor.drain() == 1

    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    # Every log is closed, with its last line counted, by the time the job has returned.
    rows = latest(run)
    for node_id, row in rows.items():
        log_file = ExecutionLogFile.objects.get(node_exec=row)
        assert log_file.status == "closed"
        assert log_file.last_seq == log_file.lines.order_by("-seq").first().seq > 1
        assert log_file.line_count == log_file.lines.count()
    threads = {node_id: thread for node_id, _, thread in closes}
    assert sorted(threads) == ["n0", "n1", "n2", "n3"]
    # n0..n2 each claimed their dependant: their logs closed beside it. n3 had none to go on with.
    assert {threads[n] for n in ("n0", "n1", "n2")} == {"log-writer"}
    assert threads["n3"] == threading.current_thread().name


@pytest.mark.django_db
def test_inside_a_transaction_the_caller_holds_the_log_closes_at_once(execution, closes):
    log_append(execution=execution, event="node_finished", status="succeeded")

    log_file_close_soon(execution=execution)

    # The writer's own connection could not see this test's uncommitted rows: nothing was handed over.
    log_file = ExecutionLogFile.objects.get(node_exec=execution)
    assert (log_file.status, log_file.last_seq) == ("closed", 1)


@pytest.mark.django_db(transaction=True)
def test_a_close_the_database_refused_is_made_once_it_is_back(execution, closes, monkeypatch):
    log_append(execution=execution, event="node_finished", status="succeeded")
    real_store = writer._batch_store
    failures = iter([OperationalError("server closed the connection unexpectedly")])

    def store_after_a_drop(batch):
        failure = next(failures, None)
        if failure is not None:
            raise failure
        real_store(batch)

    monkeypatch.setattr(writer, "RETRY_FIRST_SECONDS", 0.01)
    monkeypatch.setattr(writer, "_batch_store", store_after_a_drop)
    log_file_close_soon(execution=execution)

    assert log_writes_wait(timeout=10)
    assert ExecutionLogFile.objects.get(node_exec=execution).status == "closed"
    assert [(node_id, last_seq) for node_id, last_seq, _ in closes] == [(execution.node_id, 1)]


@pytest.mark.django_db
def test_the_reaper_closes_a_log_a_killed_worker_left_open_on_a_finished_attempt(
    task, closes, django_capture_on_commit_callbacks
):
    run = planned_run(task, _chain(2))
    run_start(run=run)
    finished, running = (run.executions.get(node_id=node_id) for node_id in ("n0", "n1"))
    long_ago = timezone.now() - timedelta(minutes=10)
    for execution in (finished, running):
        log_file_open(execution=execution)
        log_append(execution=execution, event="node_start")
    log_append(execution=finished, event="node_finished", status="succeeded")
    # n0's result committed, then its worker died before closing the log; n1 is still running.
    run.executions.filter(pk=finished.pk).update(status="succeeded", finished_at=long_ago)
    run.executions.filter(pk=running.pk).update(status="running", heartbeat_at=timezone.now())

    with django_capture_on_commit_callbacks(execute=True):
        executions_reap(stale_after=timedelta(seconds=30))

    header = ExecutionLogFile.objects.get(node_exec=finished)
    texts = list(header.lines.values_list("text", flat=True))
    # Counted from the lines stored: the worker that knew them is gone.
    assert (header.status, header.last_seq, header.line_count) == ("closed", 2, 2)
    assert header.size_bytes == sum(len(text.encode()) + 1 for text in texts)
    assert ExecutionLogFile.objects.get(node_exec=running).status == "open"
    assert [node_id for node_id, _, _ in closes] == ["n0"]


@pytest.mark.django_db(transaction=True)
def test_lines_another_thread_appends_before_the_header_commits_are_stored_by_the_callers_close(task):
    with transaction.atomic():
        execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
        log_file_open(execution=execution)
        log_append(execution=execution, event="node_start")

        # As an agent's output reader does: the log writer cannot see the header yet, and holds them back.
        def read_output() -> None:
            for number in range(20):
                log_append(execution=execution, event="agent_output", text=f"line {number}")
                time.sleep(0.03)

        reader = threading.Thread(target=read_output)
        reader.start()
        reader.join(timeout=30)
        log_append(execution=execution, event="node_completed")
        log_file_close(execution=execution)
        inside = [line["event"] for line in log_read(log_file=execution.log_file)]

    # A line the writer thread was trying to store at the close (and could not, the header unseen) is
    # back in its queue: it stores it once the header commits, in its place. Its log may be held back as
    # one whose header is missing until the writer's next try (log_writes_wait does not wait for those).
    assert inside == ["node_start", *["agent_output"] * 20, "node_completed"]
    stored: list[tuple[int, str]] = []

    def all_stored() -> bool:
        rows = ExecutionLogLine.objects.filter(log_file_id=execution.pk).order_by("seq")
        stored[:] = rows.values_list("seq", "event")
        return len(stored) == len(inside)

    wait_until(all_stored, timeout=30, message=lambda: f"stored: {stored}")
    assert stored == list(enumerate(inside, start=1))
