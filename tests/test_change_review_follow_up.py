"""A request for changes on a landed attempt of a task's finished latest run makes a follow-up run forked
from that node, whose first attempt amends the change with the review in its prompt; where the project
requires plan approval, the follow-up run waits for it like an edited fork, and starts once approved."""

from __future__ import annotations

import pytest

from graphs.engine.change_review import NotReviewable
from graphs.engine.review import run_plan_approve
from graphs.models import AttemptChange, AuditEntry
from graphs.runs.facts import task_latest_run
from tests.change_reviews import FEATURE, build_then_check, review
from tests.repos import writes
from tests.run_builders import latest


def _amends(seen):
    def amend(call):
        seen["before"] = (call.cwd / "src" / "export.py").read_text()
        seen["prompt"] = call.prompt
        return writes("src/export.py", FEATURE + "# reviewed\n")(call)

    return amend


@pytest.mark.django_db
def test_a_request_for_changes_on_a_finished_run_forks_a_follow_up_run_that_amends_the_change(
    repo_task, bob, scripted_runner, inline_executor
):
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    run.refresh_from_db()
    landed = latest(run)["build"]
    assert run.status == "succeeded"
    seen = {}
    scripted_runner.replies[("node", "build")] = _amends(seen)

    asked = review(landed, bob, "request_changes", "Mark the file as reviewed.",
                   comments=[{"path": "src/export.py", "line": 6, "body": "Say it was reviewed below."}])
    inline_executor.drain()

    follow_up = task_latest_run(repo_task.pk)
    first = follow_up.executions.get(node_id="build")
    assert follow_up.pk != run.pk and follow_up.forked_from_id == run.pk and follow_up.fork_node_id == "build"
    assert asked.next_attempt_id == first.pk and first.cause == "fork"
    assert seen["before"] == FEATURE
    assert "Mark the file as reviewed." in seen["prompt"] and "#### `src/export.py`, line 6" in seen["prompt"]
    follow_up.refresh_from_db()
    assert follow_up.status == "succeeded"
    change = AttemptChange.objects.get(node_exec=first)
    assert "+# reviewed" in change.diff and "+def export():" in change.diff
    assert AuditEntry.objects.filter(action="change_review.changes_requested", object_id=str(landed.pk)).exists()
    assert AuditEntry.objects.filter(action="run.forked", object_id=str(follow_up.pk)).exists()
    # The earlier run is no longer its task's latest: its attempts take no more decisions.
    with pytest.raises(NotReviewable):
        review(landed, bob, "request_changes", "Once more.")


@pytest.mark.django_db
def test_where_plans_need_approval_the_follow_up_run_waits_for_it_then_starts(
    repo_task, project, reviewed, alice, bob, scripted_runner, inline_executor
):
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    seen = {}
    scripted_runner.replies[("node", "build")] = _amends(seen)
    review(latest(run)["build"], bob, "request_changes", "Mark the file as reviewed.")
    inline_executor.drain()

    follow_up = task_latest_run(repo_task.pk)
    assert follow_up.status == "awaiting_approval" and "prompt" not in seen

    run_plan_approve(run=follow_up, reviewer=alice)
    inline_executor.drain()

    follow_up.refresh_from_db()
    assert follow_up.status == "succeeded" and seen["before"] == FEATURE


@pytest.mark.django_db
def test_an_approval_or_a_comment_on_a_landed_change_is_recorded_and_moves_nothing(
    repo_task, bob, scripted_runner, inline_executor
):
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    landed = latest(run)["build"]

    review(landed, bob, "comment", comments=[{"path": "src/export.py", "line": 2, "body": "Nice."}])
    review(landed, bob, "approve", "Good after the fact.")

    assert task_latest_run(repo_task.pk).pk == run.pk
    assert list(landed.change_reviews.values_list("decision", flat=True)) == ["comment", "approve"]
