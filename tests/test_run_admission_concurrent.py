"""Admissions racing on PostgreSQL — runs started at once, runs ending while others admit — never run
more runs than the limit, never admit a run twice, and admit the first queued first."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, connections

from graphs.engine import run_start
from graphs.engine.scheduler import runs_admit
from graphs.executors import executor_set
from graphs.models import WorkGraphRun
from graphs.runs.status import run_status_set
from tests import factories
from tests.run_builders import edges_for, node, node_rows, planned_run

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="threads racing on row and advisory locks"),
]

LIMIT = 3
RUNS = 12


class _Kept:
    """An executor that keeps the jobs it is handed (from any thread) and runs none."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def submit(self, name: str, arg: str, *, delay: float = 0.0) -> None:
        with self._lock:
            self.jobs.append((name, arg))

    def waiting(self) -> bool:
        return False


def _together(calls: list[Callable[[], object]]) -> None:
    """Run ``calls`` each in a thread of its own, released at once; re-raise the first error."""
    barrier = threading.Barrier(len(calls))
    errors: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        try:
            barrier.wait()
            call()
        except BaseException as error:  # reported to the test below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors


def _running() -> set:
    return set(WorkGraphRun.objects.filter(status="running").values_list("pk", flat=True))


def test_racing_starts_and_ends_never_run_more_than_the_limit(project, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = LIMIT
    nodes = [node("build"), node("check", "build")]
    runs = [planned_run(factories.TaskFactory(project=project), {"nodes": nodes, "edges": edges_for(nodes)})
            for _ in range(RUNS)]
    previous = executor_set(_Kept())
    most_seen = 0
    watching = threading.Event()

    def watch() -> None:
        nonlocal most_seen
        while not watching.is_set():
            most_seen = max(most_seen, WorkGraphRun.objects.filter(status="running").count())
        connections.close_all()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        _together([lambda run=run: run_start(run=run) for run in runs])
        first = _running()
        queued = list(WorkGraphRun.objects.filter(status="queued").order_by("queued_at", "run_id")
                      .values_list("pk", flat=True))
        ended = [WorkGraphRun.objects.get(pk=pk) for pk in first]
        _together([*(lambda run=run: run_status_set(run=run, status="succeeded", allowed_from=["running"])
                     for run in ended), *([runs_admit] * 6)])
        runs_admit()  # as the job the last end submitted would
    finally:
        watching.set()
        watcher.join(60)
        executor_set(previous)

    assert len(first) == LIMIT and len(queued) == RUNS - LIMIT
    assert _running() == set(queued[:LIMIT])
    assert most_seen == LIMIT
    for run in runs:
        expected = 2 if run.pk in first | _running() else 0
        assert node_rows(run).count() == expected, run.pk
