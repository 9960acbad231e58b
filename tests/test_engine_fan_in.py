"""The leaves of a fan-in finish without the run lock while the join still waits; the last one queues it."""

from __future__ import annotations

import math

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from graphs.domain import manifest as manifest_lib
from graphs.engine import attempt, fan_in, node_execution_run, run_start, scheduler, state
from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.profiles.resolve import profiles_ensure_shipped
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


def test_no_leaf_takes_the_run_lock_and_the_join_runs_once(task, scripted_runner, inline_executor, locked):
    """The last leaf finds the join ready and queues it itself, without the run lock."""
    leaves = ["a", "b", "c"]
    nodes = [node("root"), *(node(leaf, "root") for leaf in leaves), node("join", *leaves)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    node_execution_run(node_exec_id=run.executions.get(node_id="root").pk)

    for leaf in leaves:
        locked.clear()
        node_execution_run(node_exec_id=run.executions.get(node_id=leaf).pk)
        assert locked == [], leaf

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
def test_a_fan_out_leaf_costs_a_fixed_number_of_queries(task, scripted_runner, inline_executor, monkeypatch):
    """Per leaf: its result, log line and log's close, committed with the claim of the next queued
    sibling (its row, its run, the claim, its log row) — one transaction, its two statements — the
    root's output handed on from leaf to leaf, not read again; not the agent profile its call runs
    with, which the job resolved once for every leaf it runs (graphs.profiles.resolve); and nothing
    after the commit, since the join waits on the sibling just claimed. Growing this is growing every
    leaf's cost; outside a test transaction, as in a worker. Both fan-outs are wider than the jobs
    handed out at once, whose claims (found taken) are the same number in both.

    The engine's two clocks are held still, so the count does not depend on how fast the machine is:
    the progress recount (at most twice a second) would add a query to the last leaf's advance whenever
    the leaves took longer than half a second, and one job stops running its siblings after five."""
    monkeypatch.setattr(state, "PROGRESS_EVERY_SECONDS", math.inf)
    monkeypatch.setattr(attempt, "CONTINUE_FOR_SECONDS", math.inf)
    profiles_ensure_shipped()  # made on first use otherwise, in the first run's count only
    counts = {}
    for leaves in (scheduler.FAN_OUT_JOBS + 4, scheduler.FAN_OUT_JOBS + 20):
        run = _fan_out(task, leaves)
        run_start(run=run)
        with CaptureQueriesContext(connection) as queries:
            inline_executor.drain()
        assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
        counts[leaves] = len(queries)
    assert (counts[scheduler.FAN_OUT_JOBS + 20] - counts[scheduler.FAN_OUT_JOBS + 4]) / 16 == 8


def _appended_behind(run: WorkGraphRun, dependency: str, node_id: str) -> None:
    """What an append adding ``node_id`` behind ``dependency`` leaves while that one still runs: a new
    manifest version and the node pending, as the append's own advance, seeing the dependency
    unfinished, queued nothing."""
    added = node(node_id, dependency)
    current = WorkGraphRun.objects.get(pk=run.pk)
    current.graph_manifest = manifest_lib.merge_manifests(current.graph_manifest,
                                                          {"nodes": [added], "edges": edges_for([added])})
    current.manifest_version += 1
    current.save(update_fields=["graph_manifest", "manifest_version"])
    WorkNodeExecution.objects.create(run=current, node_id=node_id, attempt=1)


@pytest.mark.django_db(transaction=True)
def test_a_node_appended_behind_a_leaf_that_settled_without_looking_still_runs(
    task, scripted_runner, inline_executor, monkeypatch
):
    """The first leaf claims its sibling with its result and settles without looking at the run. An
    append lands after that claim read the run, adding a node behind the first leaf: the sibling runs
    with the manifest the first leaf ran with — handed on, even once the process no longer keeps its
    shape — so its advance finds the run's manifest ahead, takes the full pass, and the node runs."""
    run = _fan_out(task, 2)
    claim = fan_in.queued_attempt_claim

    def claim_then_append(**kwargs):
        claimed = claim(**kwargs)
        if claimed is not None and claimed.node_id == "leaf01":
            _appended_behind(run, "leaf00", "after_leaf00")
            monkeypatch.setattr(state, "_shapes", {})  # as a busy process drops the shapes it keeps
        return claimed

    monkeypatch.setattr(fan_in, "queued_attempt_claim", claim_then_append)
    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    assert rows["leaf01"].worker == rows["leaf00"].worker  # claimed with leaf00's result
    assert rows["after_leaf00"].status == "succeeded"
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


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
