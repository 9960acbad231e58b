"""Small builders for manifests and runs used by the engine tests."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

from django.db import connection
from django.db.models import QuerySet

from graphs.engine import run_start
from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from tests import factories


def node(node_id: str, *deps: str, **extra) -> dict:
    return {"node_id": node_id, "depends_on": list(deps), "task_prompt": f"Do {node_id}.", **extra}


def python(code: str, *args: str) -> list[str]:
    """A command running ``code`` with this test run's Python (a real interpreter, on any machine)."""
    return [sys.executable, "-c", code, *args]


def command_node(node_id: str, code: str, *deps: str, args: tuple[str, ...] = (), **extra) -> dict:
    """A command node running the Python ``code`` (with ``args``) in its attempt's folder."""
    return {"node_id": node_id, "depends_on": list(deps), "command": python(code, *args), **extra}


def edges_for(nodes: list[dict], *, zero_token: set[str] = frozenset()) -> list[dict]:
    edges = []
    for item in nodes:
        for dep in item["depends_on"]:
            kind = "zero_token" if item["node_id"] in zero_token else "needs_judgment"
            edges.append({"from": dep, "to": item["node_id"], "edge_type": kind})
    return edges


def planned_run(task, manifest: dict, *, org_node: str = "planner", status: str = "ready") -> WorkGraphRun:
    """A run as a successful fresh planning call leaves it: manifest stored, planning node recorded."""
    run = factories.RunFactory(task=task, graph_manifest=manifest, status=status, manifest_version=1)
    WorkNodeExecution.objects.create(
        run=run, node_id=PLANNING_NODE_ID, subagent_type=org_node, attempt=1, cause="planning", status="succeeded",
        output_payload={"new_node_ids": [n["node_id"] for n in manifest["nodes"]]},
    )
    return run


def finished_build_check_tests(task, executor) -> WorkGraphRun:
    """A run of ``task`` through build → check → tests (a command node), started and drained by ``executor``."""
    nodes = [node("build"), node("check", "build"), command_node("tests", "print(1)", "check")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    executor.drain()
    return run


def run_with_attempts(task, *, status="succeeded", created=None, nodes=(), org_node="planner", costs=(), **fields):
    """A run of ``task`` whose manifest and attempts are ``nodes`` (node ids, one attempt each, run by
    ``org_node``), the attempts costing ``costs`` in turn (none reported past them), created at ``created``."""
    run = factories.RunFactory(task=task, status=status, **fields)
    run.graph_manifest = {"nodes": [{"node_id": node_id, "depends_on": []} for node_id in nodes], "edges": []}
    run.save(update_fields=["graph_manifest"])
    for index, node_id in enumerate(nodes):
        cost = costs[index] if index < len(costs) else None
        factories.ExecutionFactory(run=run, node_id=node_id, subagent_type=org_node, status="succeeded", cost_usd=cost,
                                   agent_calls=1 if cost is not None else 0)
    known = [cost for cost in costs[:len(nodes)] if cost is not None]
    # As the engine keeps it (graphs.runs.accounting.run_cost_write): its attempts' costs summed.
    WorkGraphRun.objects.filter(pk=run.pk).update(cost_usd=sum(known, Decimal(0)) if known else None)
    if created is not None:
        WorkGraphRun.objects.filter(pk=run.pk).update(created_at=created)
    return run


def many_runs(task, count: int) -> None:
    """``count`` succeeded runs of ``task``, made at once: two nodes each, run by the coder for $0.01 apiece."""
    runs = WorkGraphRun.objects.bulk_create(
        [WorkGraphRun(task=task, status="succeeded", graph_manifest={"nodes": [{"node_id": "a"}, {"node_id": "b"}]},
                      cost_usd=Decimal("0.02")) for _ in range(count)]
    )
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=node_id, subagent_type="coder", status="succeeded",
                           cost_usd=Decimal("0.01"), agent_calls=1) for run in runs for node_id in ("a", "b")]
    )


def node_rows(*runs: WorkGraphRun) -> QuerySet[WorkNodeExecution]:
    """Every attempt of the runs' manifest nodes; the planning calls are left out."""
    return WorkNodeExecution.objects.filter(run__in=runs).exclude(node_id__startswith=PLANNING_NODE_ID)


def latest(run: WorkGraphRun) -> dict[str, WorkNodeExecution]:
    rows: dict[str, WorkNodeExecution] = {}
    for row in node_rows(run).order_by("node_id", "attempt"):
        rows[row.node_id] = row
    return rows


def lanes_manifest(*, lanes: int, length: int) -> dict:
    """One root, ``lanes`` chains of ``length`` nodes hanging off it, one join: lanes * length + 2 nodes."""
    nodes = [node("root")]
    for lane in range(lanes):
        previous = "root"
        for step in range(length):
            node_id = f"lane{lane}_{step}"
            nodes.append(node(node_id, previous))
            previous = node_id
    nodes.append(node("join", *(f"lane{lane}_{length - 1}" for lane in range(lanes))))
    return {"nodes": nodes, "edges": edges_for(nodes)}


@contextmanager
def drained_in_background(executor, *, gate: Path) -> Iterator[threading.Thread]:
    """Run the executor's jobs on a thread of their own while the block watches them work; on leaving,
    open ``gate`` (what the fake agent or the command waits for) and wait for the jobs to end."""

    def work() -> None:
        try:
            executor.drain()
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    try:
        yield worker
    finally:
        gate.touch()
        worker.join(30)
    assert not worker.is_alive(), "the jobs did not end once the gate opened"
