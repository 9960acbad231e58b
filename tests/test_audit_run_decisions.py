"""Every decision on a run is on the audit log, with who took it, the run, its project and, where fields
changed, before and after: plan and append approvals and rejections, cancels, forks and edited forks,
budget raises. The entry lands in the decision's transaction: a decision refused leaves none."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from graphs.engine import run_cancel, run_fork
from graphs.engine.budget_resume import BudgetResumeRefused, run_budget_raise_resume
from graphs.engine.fork_edits import run_fork_edited
from graphs.engine.review import run_plan_approve, run_plan_reject
from graphs.errors import InvalidTransitionError
from graphs.models import PLANNING_NODE_ID, AppendReview, AuditEntry, WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.clients import signed_in
from tests.run_builders import planned_run, run_with_attempts

pytestmark = pytest.mark.django_db

Action = AuditEntry.Action


def only_entry() -> AuditEntry:
    (entry,) = AuditEntry.objects.all()
    return entry


def post(client, url: str, body: dict):
    return client.post(url, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def awaiting(reviewed, task) -> WorkGraphRun:
    return planned_run(task, {"nodes": [{"node_id": "a", "depends_on": []}], "edges": []}, status="awaiting_approval")


@pytest.fixture
def append_waiting(reviewed, task) -> WorkGraphRun:
    """A ready run whose coder's append waits for a reviewer."""
    run = planned_run(task, {"nodes": [{"node_id": "a", "depends_on": []}], "edges": []}, status="awaiting_approval")
    call = WorkNodeExecution.objects.create(run=run, node_id=f"{PLANNING_NODE_ID}:coder", subagent_type="coder",
                                            attempt=1, cause="planning", status="succeeded")
    AppendReview.objects.create(run=run, planning_execution=call, new_node_ids=["a"], resume_status="ready")
    return run


def test_a_plan_approved_is_recorded_with_its_reviewer_run_project_and_comment(awaiting, bob):
    run_plan_approve(run=awaiting, reviewer=bob, comment="looks right")

    entry = only_entry()
    assert (entry.actor, entry.actor_name, entry.action, entry.object_type, entry.object_id) == (
        bob, "bob", Action.PLAN_APPROVED, "run", str(awaiting.pk))
    assert (entry.project, entry.project_slug) == (awaiting.task.project, awaiting.task.project.slug)
    assert entry.summary.startswith("Approved the plan of run ") and entry.summary.endswith(": looks right")
    assert awaiting.task.title in entry.summary


def test_a_plan_rejected_through_the_api_is_recorded_with_its_reason(awaiting, bob):
    response = post(signed_in(bob), f"/api/runs/{awaiting.pk}/reject", {"comment": "wrong scope"})

    assert response.status_code == 200
    entry = only_entry()
    assert (entry.actor_name, entry.action) == ("bob", Action.PLAN_REJECTED)
    assert entry.summary.endswith(": wrong scope")


def test_an_append_approved_is_recorded_as_an_append(append_waiting, bob):
    run_plan_approve(run=append_waiting, reviewer=bob)

    entry = only_entry()
    assert (entry.action, entry.actor_name, entry.object_id) == (Action.APPEND_APPROVED, "bob", str(append_waiting.pk))
    assert entry.summary.startswith("Approved the coder's append")


def test_an_append_rejected_is_recorded_with_its_reason(append_waiting, bob):
    run_plan_reject(run=append_waiting, reviewer=bob, comment="not these nodes")

    entry = only_entry()
    assert (entry.action, entry.actor_name) == (Action.APPEND_REJECTED, "bob")
    assert entry.summary.endswith(": not these nodes")


def test_a_refused_decision_leaves_no_entry(awaiting, bob):
    run_plan_approve(run=awaiting, reviewer=bob)
    with pytest.raises(InvalidTransitionError):
        run_plan_approve(run=awaiting, reviewer=bob)

    assert AuditEntry.objects.count() == 1


def test_a_cancel_is_recorded_once_however_often_it_is_asked(task, alice):
    run = run_with_attempts(task, status="running", nodes=("a",))
    client = signed_in(alice)

    assert client.post(f"/api/runs/{run.pk}/cancel").status_code == 200
    with pytest.raises(InvalidTransitionError):
        run_cancel(run=run, by=alice)

    entry = only_entry()
    assert (entry.actor_name, entry.action, entry.object_id) == ("alice", Action.RUN_CANCELLED, str(run.pk))


def test_a_fork_is_recorded_on_the_new_run_naming_the_old(task, alice, inline_executor):
    run = run_with_attempts(task, status="succeeded", nodes=("a",))

    fork = run_fork(run=run, node_id="a", by=alice)

    entry = only_entry()
    assert (entry.actor_name, entry.action, entry.object_id) == ("alice", Action.RUN_FORKED, str(fork.pk))
    assert str(run.pk)[:8] in entry.summary and " from a " in entry.summary
    assert (entry.before, entry.after) == (None, None)


def test_a_fork_through_the_page_names_its_lead(task, alice, inline_executor):
    run = run_with_attempts(task, status="succeeded", nodes=("a",))

    signed_in(alice).post(f"/runs/{run.pk}/fork/", {"node_id": "a"})

    assert (only_entry().actor_name, only_entry().action) == ("alice", Action.RUN_FORKED)


def test_an_edited_fork_records_the_prompt_before_and_after(reviewed, task, alice):
    run = run_with_attempts(task, status="succeeded", nodes=())
    run.graph_manifest = {"nodes": [{"node_id": "a", "task_prompt": "Build it.", "depends_on": []}], "edges": []}
    run.save(update_fields=["graph_manifest"])
    factories.ExecutionFactory(run=run, node_id="a", status="succeeded")

    fork = run_fork_edited(run=run, node_id="a", by=alice, prompt="Build it <b>carefully</b>.")

    entry = only_entry()
    assert (entry.action, entry.object_id, entry.actor_name) == (Action.RUN_FORK_EDITED, str(fork.pk), "alice")
    assert (entry.before, entry.after) == ({"task_prompt": "Build it."}, {"task_prompt": "Build it <b>carefully</b>."})


def test_a_budget_raise_records_the_budget_before_and_after(task, alice, inline_executor):
    run = run_with_attempts(task, status="failed", nodes=("a",), costs=(Decimal("0.5"),),
                            error_code=WorkGraphRun.StopCode.BUDGET_EXCEEDED, max_cost_usd=Decimal("0.4"))

    run_budget_raise_resume(run_id=run.pk, user=alice, max_cost_usd=Decimal("2"))

    entry = only_entry()
    assert (entry.action, entry.actor_name, entry.object_id) == (Action.RUN_BUDGET_RAISED, "alice", str(run.pk))
    assert (entry.before, entry.after) == ({"max_cost_usd": "0.4000"}, {"max_cost_usd": "2"})


def test_a_refused_budget_raise_leaves_no_entry(task, alice, inline_executor):
    run = run_with_attempts(task, status="failed", nodes=("a",), costs=(Decimal("0.5"),),
                            error_code=WorkGraphRun.StopCode.BUDGET_EXCEEDED, max_cost_usd=Decimal("0.4"))

    with pytest.raises(BudgetResumeRefused):
        run_budget_raise_resume(run_id=run.pk, user=alice, max_cost_usd=Decimal("0.1"))

    assert not AuditEntry.objects.exists()
