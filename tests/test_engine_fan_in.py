"""The leaves of a fan-in finish without the run lock while the join still waits; the last one queues it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from graphs.engine import node_execution_run, run_start, scheduler
from graphs.models import WorkGraphRun
from tests.graphs import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def locked(monkeypatch) -> list[object]:
    """The run ids the scheduler takes the run lock of, in order."""
    taken: list[object] = []
    run_locked = scheduler.run_locked

    def counting(run_id, **kwargs):
        taken.append(run_id)
        return run_locked(run_id, **kwargs)

    monkeypatch.setattr(scheduler, "run_locked", counting)
    return taken


def test_only_the_last_leaf_takes_the_run_lock_and_the_join_runs_once(task, scripted_runner, inline_executor, locked):
    leaves = ["a", "b", "c"]
    nodes = [node("root"), *(node(leaf, "root") for leaf in leaves), node("join", *leaves)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    node_execution_run(node_exec_id=run.executions.get(node_id="root").pk)

    for leaf in leaves:
        locked.clear()
        node_execution_run(node_exec_id=run.executions.get(node_id=leaf).pk)
        assert len(locked) == (1 if leaf == leaves[-1] else 0), leaf

    assert run.executions.get(node_id="join").status == "queued"
    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert [call for call in scripted_runner.node_calls() if call[0] == "join"] == [("join", 1)]
    assert latest(run)["join"].attempt == 1


def test_a_failed_leaf_still_blocks_the_join_under_the_lock(task, scripted_runner, inline_executor):
    nodes = [node("root"), node("a", "root"), node("b", "root", on_fail={"action": "hard_fail"},
                                                   judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"}),
             node("join", "a", "b")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    assert (rows["a"].status, rows["b"].status, rows["join"].status) == ("succeeded", "failed", "blocked")
    assert WorkGraphRun.objects.get(pk=run.pk).status == "failed"


def _fan_out(task, leaves: int) -> WorkGraphRun:
    leaf_ids = [f"leaf{i:02d}" for i in range(leaves)]
    nodes = [node("root"), *(node(leaf, "root") for leaf in leaf_ids), node("join", *leaf_ids)]
    return planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})


@pytest.mark.django_db(transaction=True)
def test_a_fan_out_leaf_costs_a_fixed_number_of_queries(task, scripted_runner, inline_executor):
    """Per leaf: its result, log line and log's close, committed with the claim of the next queued
    sibling (its row, its run, the claim, its log row) — one transaction, its two statements — the
    root's output handed on from leaf to leaf, not read again; then the rows that tell the join still
    waits, with the run's status, and, when the join's last few dependencies have all finished, a
    probe of the others (nine on SQLite; on PostgreSQL, whose claims take siblings queued at the same
    moment in no set order, a probe or two more). Growing this is growing every leaf's cost; outside a
    test transaction, as in a worker. Both fan-outs are wider than the jobs handed out at once, whose
    claims (found taken) are the same number in both."""
    counts = {}
    for leaves in (scheduler.FAN_OUT_JOBS + 4, scheduler.FAN_OUT_JOBS + 20):
        run = _fan_out(task, leaves)
        run_start(run=run)
        with CaptureQueriesContext(connection) as queries:
            inline_executor.drain()
        assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
        counts[leaves] = len(queries)
    assert (counts[scheduler.FAN_OUT_JOBS + 20] - counts[scheduler.FAN_OUT_JOBS + 4]) / 16 <= 11


@pytest.mark.django_db(transaction=True)
def test_every_leaf_a_worker_runs_in_turn_is_given_the_roots_output(task, scripted_runner, inline_executor):
    """The root's output is read by the first leaf a job runs and handed on to each sibling it claims next:
    every leaf's prompt still holds it."""
    run = _fan_out(task, scheduler.FAN_OUT_JOBS + 6)
    scripted_runner.replies[("node", "root")] = "the root found seven modules"
    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    leaves = [node_id for node_id in rows if node_id.startswith("leaf")]
    assert len(leaves) == scheduler.FAN_OUT_JOBS + 6
    assert all("the root found seven modules" in rows[leaf].input_payload["prompt"] for leaf in leaves)


def test_a_leaf_that_finishes_after_an_append_takes_the_locked_path(task, scripted_runner, locked):
    """The run's manifest moved on while the leaf ran (an append): its advance is the full one, under the
    lock, with the new version's shape."""
    run = _fan_out(task, 3)
    run_start(run=run)
    node_execution_run(node_exec_id=run.executions.get(node_id="root").pk)
    locked.clear()

    def appended_meanwhile(call):
        WorkGraphRun.objects.filter(pk=run.pk).update(manifest_version=F("manifest_version") + 1)
        return "leaf00 done"

    scripted_runner.replies[("node", "leaf00")] = appended_meanwhile
    node_execution_run(node_exec_id=run.executions.get(node_id="leaf00").pk)
    assert locked == [run.pk]
    assert run.executions.get(node_id="join").status == "pending"
