"""A change waiting for a reviewer through the run's stops and recoveries: it is no lost work, so the
reaper and a worker's restart leave it waiting; a cancel ends it (its change kept, never landed) and the
run ends cancelled at once; a decision on a run that is stopping is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphs.engine import executions_reap, run_cancel
from graphs.engine.change_review import NotReviewable
from graphs.models import AttemptChange, ExecutionLogFile, WorkNodeExecution
from tests.change_reviews import build_then_check, review, review_required, waiting_build
from tests.run_builders import latest


@pytest.mark.django_db
def test_the_reaper_leaves_a_change_waiting_for_its_reviewer_however_long_it_waits(
    repo_task, project, bob, scripted_runner, inline_executor
):
    review_required(project)
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    build = waiting_build(run)
    WorkNodeExecution.objects.filter(pk=build.pk).update(heartbeat_at=build.heartbeat_at - timedelta(days=3),
                                                         finished_at=build.finished_at - timedelta(days=3))

    assert executions_reap(stale_after=timedelta(seconds=0)) == []
    inline_executor.drain()

    build.refresh_from_db()
    run.refresh_from_db()
    assert build.status == "awaiting_review" and run.status == "running"
    assert run.executions.count() == 3  # the planning call, build, check: no retry was made
    assert ExecutionLogFile.objects.get(node_exec=build).status == "closed"
    # What a restarted worker finds is the same row: the reviewer's approval still lands it.
    review(build, bob, "approve")
    inline_executor.drain()
    run.refresh_from_db()
    assert run.status == "succeeded"


@pytest.mark.django_db
def test_cancelling_a_run_whose_change_waits_ends_it_cleanly(repo_task, project, alice, bob, scripted_runner,
                                                           inline_executor):
    review_required(project)
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    build = waiting_build(run)

    run_cancel(run=run, by=alice)

    run.refresh_from_db()
    rows = latest(run)
    assert run.status == "cancelled"
    assert (rows["build"].status, rows["check"].status) == ("cancelled", "cancelled")
    change = AttemptChange.objects.get(node_exec=build)
    assert change.ref and not change.merge_commit
    with pytest.raises(NotReviewable):
        review(build, bob, "approve")
