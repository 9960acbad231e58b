"""A run's graph for the visualizer (``graph.json``), whole or by status alone, and the failure role of each
of its nodes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from graphs.agents.base import TOKEN_FIELDS
from graphs.domain.attempt_words import attempt_tool_failures
from graphs.domain.failure_roles import FailureRole, failure_roles
from graphs.logs.events import token_total
from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import latest_by_node, node_owners
from graphs.runs.vocabulary import NOT_STARTED


def run_graph_data(run: WorkGraphRun) -> dict[str, Any]:
    """The run's DAG for the visualizer: nodes with live status, edges with loop-back counts, every attempt.

    One query for the executions whatever the graph size (the run is already loaded).
    """
    manifest = run.graph_manifest or {}
    rows = list(
        WorkNodeExecution.objects.filter(run=run)
        .order_by("created_at", "attempt")
        .values(
            "node_exec_id", "node_id", "attempt", "cause", "cause_node_id", "status", "subagent_type",
            "started_at", "finished_at", "output_payload__new_node_ids", "agent_calls", "cost_usd", *TOKEN_FIELDS,
            "calls_without_usage", "calls_without_cost", "tool_failures", "tool_failure_first",
        )
    )
    latest = latest_by_node(rows)
    attempts_count: dict[str, int] = defaultdict(int)
    node_cost: dict[str, Decimal] = {}
    for row in rows:
        attempts_count[row["node_id"]] += 1
        row["tokens"] = token_total(row)
        if row["cost_usd"] is not None:
            node_cost[row["node_id"]] = node_cost.get(row["node_id"], Decimal(0)) + row["cost_usd"]
    planning = [row for row in rows if row["node_id"].startswith(PLANNING_NODE_ID)]
    owners = node_owners(
        ((row["status"], row["subagent_type"], row["output_payload__new_node_ids"]) for row in planning), manifest
    )
    nodes = [_planning_node(row) for row in planning]
    roles = run_failure_roles(manifest, {node_id: row["status"] for node_id, row in latest.items()})
    for spec in manifest.get("nodes", []):
        node_id = spec["node_id"]
        row = latest.get(node_id)
        role = roles.get(node_id)
        nodes.append({**_graph_node(spec, row, attempts=attempts_count.get(node_id, 0), owner=owners.get(node_id, "")),
                      "cost_usd": _float(node_cost.get(node_id)), "failure_role": role.as_dict() if role else None})
    loop_back_runs = _loop_back_firings(rows)
    edges = [
        {
            "from": edge["from"],
            "to": edge["to"],
            "edge_type": edge.get("edge_type", "needs_judgment"),
            "fired": loop_back_runs.get(edge["from"], 0) if edge.get("edge_type") == "on_failure" else 0,
        }
        for edge in manifest.get("edges", [])
        if isinstance(edge, dict) and "from" in edge and "to" in edge
    ]
    return {
        **_graph_head(run),
        "nodes": nodes,
        "edges": edges,
        "attempts": [
            {
                "node_exec_id": str(row["node_exec_id"]), "node_id": row["node_id"], "attempt": row["attempt"],
                "cause": row["cause"], "cause_node_id": row["cause_node_id"], "status": row["status"],
                "started_at": _iso(row["started_at"]), "finished_at": _iso(row["finished_at"]),
                "agent_calls": row["agent_calls"], "cost_usd": _float(row["cost_usd"]), "tokens": row["tokens"],
                "calls_without_usage": row["calls_without_usage"], "calls_without_cost": row["calls_without_cost"],
                "tool_failures": attempt_tool_failures(count=row["tool_failures"], first=row["tool_failure_first"]),
            }
            for row in rows
        ],
    }


def run_graph_statuses(run: WorkGraphRun) -> dict[str, Any]:
    """graph.json of a run the page opens folded into stages: ``run_graph_data`` with each work node's
    id, stage (``org_node``), kind, status and number of attempts alone, its planning calls whole, no
    edges nor attempts, and ``collapsed`` true: what the page's one box per stage counts, and what live
    events update. The page fetches the whole graph when a stage is opened or the timeline shown.

    Two queries whatever the graph size: the planning calls, and each attempt's node, number, status
    and org node (the run is already loaded).
    """
    manifest = run.graph_manifest or {}
    planning = list(
        WorkNodeExecution.objects.filter(run=run, node_id__startswith=PLANNING_NODE_ID)
        .order_by("created_at", "attempt")
        .values("node_exec_id", "node_id", "attempt", "status", "subagent_type", "started_at", "finished_at",
                "output_payload__new_node_ids")
    )
    # Each node's (latest attempt, its status, its org node) and how many attempts it has: tuples, not
    # dicts, as there are as many as the run has attempts.
    latest: dict[str, tuple[int, str, str]] = {}
    attempts_count: dict[str, int] = defaultdict(int)
    for node_id, attempt, status, subagent_type in (
        WorkNodeExecution.objects.filter(run=run).exclude(node_id__startswith=PLANNING_NODE_ID)
        .values_list("node_id", "attempt", "status", "subagent_type")
    ):
        attempts_count[node_id] += 1
        if node_id not in latest or attempt > latest[node_id][0]:
            latest[node_id] = (attempt, status, subagent_type)
    owners = node_owners(
        ((row["status"], row["subagent_type"], row["output_payload__new_node_ids"]) for row in planning), manifest
    )
    nodes = [_planning_node(row) for row in planning]
    for spec in manifest.get("nodes", []):
        node_id = spec["node_id"]
        _, status, subagent_type = latest.get(node_id, (0, NOT_STARTED, ""))
        nodes.append({
            "node_id": node_id, "org_node": owners.get(node_id) or subagent_type or "",
            "kind": "catalog" if "artifact_type" in spec else "generic",
            "status": status, "attempts": attempts_count[node_id],
        })
    return {**_graph_head(run), "collapsed": True, "nodes": nodes, "edges": [], "attempts": []}


def _graph_head(run: WorkGraphRun) -> dict[str, Any]:
    return {
        # The attempt statuses the page reads as finished and as under way: the models' own sets.
        "statuses": {"finished": sorted(WorkNodeExecution.FINISHED_STATUSES),
                     "active": sorted(WorkNodeExecution.ACTIVE_STATUSES)},
        "run": {
            "run_id": str(run.run_id), "status": run.status, "manifest_version": run.manifest_version,
            "task_id": str(run.task_id), "error": run.error, "error_code": run.error_code,
            "max_cost_usd": _float(run.max_cost_usd),
        },
    }


def run_failure_roles(manifest: dict, statuses: Mapping[str, str]) -> dict[str, FailureRole]:
    """The failure role of each failed or blocked manifest node, by the status of its latest attempt
    (``statuses``): which are root causes, which failed or were blocked because of one."""
    nodes = [spec for spec in manifest.get("nodes", []) if isinstance(spec, dict) and "node_id" in spec]
    return failure_roles(
        dependencies={spec["node_id"]: list(spec.get("depends_on") or []) for spec in nodes},
        statuses={spec["node_id"]: statuses[spec["node_id"]] for spec in nodes if spec["node_id"] in statuses},
    )


def _loop_back_firings(rows: list[dict]) -> dict[str, int]:
    """How many times each failing node sent the run back: one firing per failed attempt that looped back."""
    firings: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        if row["cause"] == "loop_back" and row["cause_node_id"] and row["node_id"] == row["cause_node_id"]:
            # The failing node's own rerun marks one firing (its previous attempt failed and looped back).
            firings[row["cause_node_id"]].add(row["attempt"])
    return {node_id: len(attempts) for node_id, attempts in firings.items()}


def _graph_node(spec: dict, row: dict | None, *, attempts: int, owner: str) -> dict[str, Any]:
    judgment = spec.get("judgment") or {}
    on_fail = spec.get("on_fail") or {}
    return {
        "node_id": spec["node_id"],
        "label": spec["node_id"],
        "org_node": owner or (row or {}).get("subagent_type") or "",
        "kind": "catalog" if "artifact_type" in spec else "generic",
        "artifact_type": spec.get("artifact_type"),
        "node_type": spec.get("node_type"),
        "judgment_kind": judgment.get("kind", "none"),
        "on_fail_action": on_fail.get("action"),
        "status": row["status"] if row else NOT_STARTED,
        "attempts": attempts,
        "latest_exec_id": str(row["node_exec_id"]) if row else None,
        "duration_ms": _duration_ms(row),
        "depends_on": list(spec.get("depends_on") or []),
    }


def _planning_node(row: dict) -> dict[str, Any]:
    return {
        "node_id": row["node_id"] if row["attempt"] == 1 else f"{row['node_id']}#{row['attempt']}",
        "label": row["node_id"],
        "org_node": row["subagent_type"],
        "kind": "planning",
        "artifact_type": None,
        "node_type": None,
        "judgment_kind": "none",
        "on_fail_action": None,
        "status": row["status"],
        "attempts": 1,
        "latest_exec_id": str(row["node_exec_id"]),
        "duration_ms": _duration_ms(row),
        "depends_on": [],
    }


def _duration_ms(row: dict | None) -> int | None:
    if not row or not row["started_at"] or not row["finished_at"]:
        return None
    return int((row["finished_at"] - row["started_at"]).total_seconds() * 1000)


def _float(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


def _iso(value) -> str | None:
    return value.isoformat() if value else None
