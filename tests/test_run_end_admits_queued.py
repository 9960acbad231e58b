"""A running run's end admits the oldest queued run in its place: its nodes are created and scheduled as
a start does, its budget the one it was started with, and its nodes become ready only then."""

from __future__ import annotations

from decimal import Decimal

import pytest

from graphs.engine import run_start, run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import WorkGraphRun
from graphs.runs.status import run_status_set
from tests import factories
from tests.run_builders import edges_for, node, node_rows, planned_run

pytestmark = pytest.mark.django_db


def _manifest() -> dict:
    nodes = [node("build"), node("check", "build")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def _planned(project) -> WorkGraphRun:
    return planned_run(factories.TaskFactory(project=project), _manifest())


def test_each_end_admits_the_oldest_queued_run_and_never_two_run_at_once(
    project, scripted_runner, inline_executor, settings
):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    runs = [_planned(project) for _ in range(3)]
    for run in runs:
        run_start(run=run, max_cost_usd=Decimal("7") if run is runs[2] else None)

    inline_executor.drain()

    first, second, third = (WorkGraphRun.objects.get(pk=run.pk) for run in runs)
    assert [run.status for run in (first, second, third)] == ["succeeded"] * 3
    assert first.finished_at <= second.started_at and second.finished_at <= third.started_at
    assert second.queued_at < third.queued_at < second.started_at
    assert third.max_cost_usd == Decimal("7")
    # A node is ready once its run is admitted, not once the run was asked to start.
    assert min(node_rows(third).values_list("ready_at", flat=True)) >= third.started_at


def test_a_run_leaving_running_for_a_reviewer_frees_its_slot(project, scripted_runner, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    running, queued = _planned(project), _planned(project)
    run_start(run=running)
    run_start(run=queued)
    inline_executor.discard()  # the running run's node jobs: it stays running until the test moves it
    running.refresh_from_db()

    run_status_set(run=running, status=WorkGraphRun.Status.AWAITING_APPROVAL,
                   allowed_from=[WorkGraphRun.Status.RUNNING])
    assert WorkGraphRun.objects.get(pk=queued.pk).status == "queued"
    inline_executor.drain()

    queued.refresh_from_db()
    assert queued.status == "succeeded" and node_rows(queued).count() == 2


def test_an_end_with_nobody_queued_submits_no_job(project, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    run = _planned(project)
    run_start(run=run)
    inline_executor.discard()
    run.refresh_from_db()

    run_status_set(run=run, status=WorkGraphRun.Status.CANCELLED, allowed_from=[WorkGraphRun.Status.RUNNING])

    assert inline_executor.pending() == 0


@pytest.mark.django_db(transaction=True)
def test_in_the_embedded_mode_the_runs_past_the_limit_all_run_once_a_slot_frees(project, scripted_runner, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        runs = [_planned(project) for _ in range(3)]
        for run in runs:
            run_start(run=run)
        ended = [run_wait_finished(run_id=run.pk, timeout=60) for run in runs]
    finally:
        executor_set(previous)

    assert [run.status for run in ended] == ["succeeded"] * 3
    assert ended[0].finished_at <= ended[1].started_at and ended[1].finished_at <= ended[2].started_at
