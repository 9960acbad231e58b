"""Small builders for manifests and runs used by the engine tests."""

from __future__ import annotations

from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from tests import factories


def node(node_id: str, *deps: str, **extra) -> dict:
    return {"node_id": node_id, "depends_on": list(deps), "task_prompt": f"Do {node_id}.", **extra}


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


def latest(run: WorkGraphRun) -> dict[str, WorkNodeExecution]:
    rows: dict[str, WorkNodeExecution] = {}
    for row in run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).order_by("node_id", "attempt"):
        rows[row.node_id] = row
    return rows
