"""A chain's node claims its one dependant for its worker without the run lock; a stop, a failure or an
append meanwhile still ends the run as the locked advance would."""

from __future__ import annotations

import pytest
from django.db.models import F

from graphs.domain import manifest as manifest_lib
from graphs.engine import attempt, run_start
from graphs.models import WorkGraphRun
from graphs.runs.status import run_stop
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


def _chain(task, length: int) -> WorkGraphRun:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})


def test_only_the_last_node_of_a_chain_takes_the_run_lock(task, scripted_runner, inline_executor, locked):
    run = _chain(task, 5)
    run_start(run=run)
    locked.clear()

    assert inline_executor.drain() == 1
    # The last node has no dependant: its advance, under the lock, ends the stage and the run.
    assert locked == [run.pk]
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert len({row.worker for row in latest(run).values()}) == 1


STOPS = {
    "cancel": ({}, "cancelled", ""),
    "budget": ({"error_code": "budget_exceeded", "error": "the budget is spent"}, "failed", "budget_exceeded"),
}


@pytest.mark.parametrize("stop", sorted(STOPS))
def test_a_stop_during_a_chain_node_leaves_its_dependant_unclaimed(task, scripted_runner, inline_executor, stop):
    """The stop cancels the pending dependant before the node ends: the claim finds it cancelled, the
    locked advance that follows finds nothing active and ends the run."""
    asked, status, error_code = STOPS[stop]
    run = _chain(task, 4)

    def stopped_meanwhile(call):
        run_stop(run_id=run.pk, **asked)
        return "n1 done"

    scripted_runner.replies[("node", "n1")] = stopped_meanwhile
    run_start(run=run)
    inline_executor.drain()

    _stopped_after_n1(run, scripted_runner, status=status, error_code=error_code)


@pytest.mark.parametrize("stop", sorted(STOPS))
def test_a_stop_just_after_a_chain_node_claimed_its_dependant_still_ends_the_run(
    task, scripted_runner, inline_executor, monkeypatch, stop
):
    """The stop comes once the dependant is claimed, running: it runs to its end as any running attempt
    of a stopping run, nothing after it starts, and the run ends as the stop asked."""
    asked, status, error_code = STOPS[stop]
    run = _chain(task, 4)
    claimed = attempt.chain_next_claimed

    def claimed_then_stopped(execution, **kwargs):
        done = claimed(execution, **kwargs)
        if execution.node_id == "n0":
            assert done
            run_stop(run_id=run.pk, **asked)
        return done

    monkeypatch.setattr(attempt, "chain_next_claimed", claimed_then_stopped)
    run_start(run=run)
    inline_executor.drain()

    _stopped_after_n1(run, scripted_runner, status=status, error_code=error_code)


def test_a_chain_node_that_fails_loops_back_under_the_lock(task, scripted_runner, inline_executor):
    """A failed judgment claims nothing: the locked advance adds the loop-back's attempts, which run."""
    nodes = [node("n0"), node("n1", "n0"),
             node("n2", "n1", on_fail={"action": "loop_back", "max_attempts": 2},
                  judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"})]
    edges = [*edges_for(nodes), {"from": "n2", "to": "n1", "edge_type": "on_failure"}]
    run = planned_run(task, {"nodes": nodes, "edges": edges})
    scripted_runner.replies[("node", "n2", 1)] = "VERDICT: fail — too short"
    scripted_runner.replies[("node", "n2", 2)] = "VERDICT: pass"
    run_start(run=run)
    inline_executor.drain()

    assert scripted_runner.node_calls() == [("n0", 1), ("n1", 1), ("n2", 1), ("n1", 2), ("n2", 2)]
    rows = latest(run)
    assert (rows["n1"].cause, rows["n2"].status) == ("loop_back", "succeeded")
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


@pytest.mark.django_db(transaction=True)
def test_a_node_appended_behind_a_chain_node_after_its_claim_still_runs(
    task, scripted_runner, inline_executor, monkeypatch
):
    """The append lands once n0 has claimed n1 (the claim read the run at the old version): n1 runs with
    the manifest n0 ran with, so its own advance finds the run's ahead, takes the full pass, and the
    node appended behind n0 runs."""
    run = _chain(task, 3)
    claimed = attempt.chain_next_claimed

    def claimed_then_appended(execution, **kwargs):
        done = claimed(execution, **kwargs)
        if execution.node_id == "n0":
            added = node("after_n0", "n0")
            current = WorkGraphRun.objects.get(pk=run.pk)
            current.graph_manifest = manifest_lib.merge_manifests(
                current.graph_manifest, {"nodes": [added], "edges": edges_for([added])})
            current.save(update_fields=["graph_manifest"])
            WorkGraphRun.objects.filter(pk=run.pk).update(manifest_version=F("manifest_version") + 1)
            current.executions.create(node_id="after_n0", attempt=1)
        return done

    monkeypatch.setattr(attempt, "chain_next_claimed", claimed_then_appended)
    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    assert rows["n1"].worker == rows["n0"].worker  # claimed with n0's result
    assert rows["after_n0"].status == "succeeded"
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


def _stopped_after_n1(run: WorkGraphRun, scripted_runner, *, status: str, error_code: str) -> None:
    """n0 and n1 ran, once each; what follows was cancelled and the run ended as the stop asked."""
    rows = latest(run)
    assert [rows[f"n{i}"].status for i in range(4)] == ["succeeded", "succeeded", "cancelled", "cancelled"]
    assert scripted_runner.node_calls() == [("n0", 1), ("n1", 1)]
    ended = WorkGraphRun.objects.get(pk=run.pk)
    assert (ended.status, ended.error_code) == (status, error_code)
