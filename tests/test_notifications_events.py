"""The engine announces what people want to hear of, once the change commits: a run's end (succeeded,
failed, cancelled, rejected), a plan, an append or an edited fork waiting for approval, a node failed for good, an
external node waiting for its report, a run stopped by its budget — and nothing from a rolled-back change."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import transaction

from graphs.agents import AgentError
from graphs.engine import run_cancel, run_start
from graphs.engine.fork_edits import run_fork_edited
from graphs.engine.review import run_plan_reject
from graphs.models import WorkGraphRun
from graphs.notifications import Notification, _listeners, notify
from graphs.runs.budgets import budget_stop
from graphs.runs.status import run_status_set
from tests.run_builders import edges_for, node, planned_run

# Real commits: a notification is heard when the change that announced it commits, not before.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def heard():
    """Every notification committed during the test."""
    got: list[Notification] = []
    _listeners.append(got.append)
    yield got
    _listeners.remove(got.append)


def events(heard: list[Notification]) -> list[str]:
    return [notification.event for notification in heard]


def test_a_run_that_succeeds_is_announced(task, scripted_runner, inline_executor, heard):
    nodes = [node("a"), node("b", "a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()

    assert events(heard) == ["run.succeeded"]
    assert heard[0].run_id == str(run.pk)


def test_a_node_failed_for_good_and_its_run_are_announced(task, scripted_runner, inline_executor, heard):
    scripted_runner.replies[("node", "b")] = AgentError("broken", kind="cli_error", transient=False)
    nodes = [node("a"), node("b", "a"), node("c", "b")]
    run_start(run=planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}))
    inline_executor.drain()

    assert events(heard) == ["node.failed", "run.failed"]
    assert heard[0].facts["node_id"] == "b"


def test_a_plan_waiting_for_approval_then_rejected_is_announced(task, bob, heard):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="planning")
    run_status_set(run=run, status=WorkGraphRun.Status.AWAITING_APPROVAL)
    run_plan_reject(run=run, reviewer=bob, comment="not this way")

    assert events(heard) == ["approval.waiting", "run.rejected"]


def test_an_edited_fork_waiting_for_approval_is_announced_once_on_commit(
    task, alice, scripted_runner, inline_executor, heard
):
    task.project.require_plan_approval = True
    task.project.save(update_fields=["require_plan_approval"])
    run = planned_run(task, {"nodes": [node("a"), node("b", "a")], "edges": edges_for([node("a"), node("b", "a")])})
    run_start(run=run)
    inline_executor.drain()
    heard.clear()

    with transaction.atomic():
        fork = run_fork_edited(run=run, node_id="b", prompt="Do b twice.", by=alice)
        assert heard == []
    inline_executor.drain()

    assert events(heard) == ["approval.waiting"]
    assert (heard[0].run_id, heard[0].facts) == (str(fork.pk), {})


def test_an_external_node_waiting_is_announced(task, scripted_runner, inline_executor, heard):
    run_start(run=planned_run(task, {"nodes": [node("ext", executor="external")], "edges": []}))
    inline_executor.drain_due()

    assert events(heard) == ["external.waiting"]
    assert heard[0].facts["node_id"] == "ext" and heard[0].facts["deadline_at"]


def test_a_budget_stop_is_announced_once_with_the_run_failing(task, heard):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    WorkGraphRun.objects.filter(pk=run.pk).update(max_cost_usd=Decimal("0.5"))
    run.refresh_from_db()
    budget_stop(run, spent=Decimal("0.6"))

    assert events(heard) == ["budget.exceeded", "run.failed"]
    assert heard[0].facts == {"budget_usd": "0.5000", "spent_usd": "0.6"}


def test_a_cancelled_run_is_announced(task, heard):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_cancel(run=run)

    assert events(heard) == ["run.cancelled"]


def test_a_rolled_back_change_announces_nothing(task, heard):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    with pytest.raises(RuntimeError), transaction.atomic():
        notify("run.failed", run=run)
        raise RuntimeError("the change fails")

    assert heard == []
    with pytest.raises(ValueError, match="unknown notification event"):
        notify("run.exploded", run=run)
