"""The leaves of a fan-in finish without the run lock while the join still waits; the last one queues it."""

from __future__ import annotations

import pytest

from graphs.engine import node_execution_run, run_start, scheduler
from graphs.models import WorkGraphRun
from tests.graphs import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


def test_only_the_last_leaf_takes_the_run_lock_and_the_join_runs_once(
    task, scripted_runner, inline_executor, monkeypatch
):
    locked: list[object] = []
    run_locked = scheduler.run_locked

    def counting(run_id, **kwargs):
        locked.append(run_id)
        return run_locked(run_id, **kwargs)

    monkeypatch.setattr(scheduler, "run_locked", counting)
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
