"""The relay of seed 002 (``bbs/attach`` → work → ``bbs/result``): someone outside the engine takes on
part of a running task.

``relay_attach`` appends an external node (``executor: external``, see ``graphs.engine.external``) to
the task's running run, owned by the user and bot that attached it, under a parent — a node of the
run, or the task itself (its id, or nothing). It needs no dependency: the relay reads what is done
from the dashboard. The run then waits for its result like any external node's. Only its owner may
post the result (``relay_result``), which completes it as a collaboration report does: idempotent
by digest, a different result after the end is refused. While a relay under a parent is open, another
owner attaching under the same parent is refused; the same owner attaching again gets the same node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from graphs.collaboration.reports import ReportOutcome, ReportRejected, node_result_report
from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph
from graphs.engine.scheduler import run_advance
from graphs.engine.state import Cause, RunStatus, latest_rows, manifest_node, run_locked
from graphs.logs.events import node_states_emit, run_event_emit
from graphs.models import Task, WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import task_latest_run

RELAY_NODE_PREFIX = "relay_"
RELAY_ORG_NODE = "relay"


@dataclass(frozen=True)
class RelaySpec:
    """What the relay says it will do: seed 002's task_spec, flattened."""

    title: str
    instruction: str
    objective: str
    acceptances: list[dict[str, str]]
    background: str = ""


def relay_attach(
    *, task: Task, parent_node_id: str, spec: RelaySpec, bot_id: str, user: AbstractBaseUser,
    deadline_seconds: int | None = None,
) -> str:
    """Attach a relay node for ``user`` and ``bot_id`` to the task's running run; return its node id."""
    run = task_latest_run(task.pk)
    if run is None:
        raise ReportRejected("the task has no run to relay", code="not_running")
    owner = {"user": user.get_username(), "bot_id": bot_id}
    parent = "" if parent_node_id in ("", str(task.pk)) else parent_node_id
    with run_locked(run.pk) as locked:
        if locked.status != RunStatus.RUNNING or locked.cancel_requested_at is not None:
            raise ReportRejected(f"the task's run is {locked.state_label()}; only a running run takes a relay",
                                 code="not_running")
        manifest = locked.graph_manifest or {"nodes": [], "edges": []}
        ids = manifest_graph.manifest_node_ids(manifest)
        if parent and parent not in ids:
            raise ReportRejected(f"the run has no node {parent!r} to relay under", code="unknown_node")
        open_relay = _open_relay(locked, manifest, parent=parent)
        if open_relay is not None:
            node_id, held_by = open_relay
            if held_by == owner:
                return node_id  # attached already: the same node again
            raise ReportRejected(f"{held_by['bot_id'] or held_by['user']} already relays under "
                                 f"{parent or 'the task'} (node {node_id!r})", code="relay_taken")
        node = _relay_node(_free_id(ids), spec=spec, parent=parent, owner=owner, deadline_seconds=deadline_seconds)
        try:
            manifest_lib.validate_graph_manifest({"nodes": [node], "edges": []},
                                                 manifest_graph.data_dependencies(manifest),
                                                 max_nodes=max(settings.WORKGRAPH_MAX_NODES - len(ids), 0))
        except manifest_lib.ManifestError as error:
            raise ReportRejected("the relay's task_spec does not make a node: " + "; ".join(error.errors),
                                 code="bad_task_spec") from error
        locked.graph_manifest = manifest_lib.merge_manifests(manifest, {"nodes": [node], "edges": []})
        locked.manifest_version += 1
        locked.save(update_fields=["graph_manifest", "manifest_version"])
        created = WorkNodeExecution.objects.create(run=locked, node_id=node["node_id"], subagent_type=RELAY_ORG_NODE,
                                                   attempt=1, cause=Cause.INITIAL)
        run_event_emit(run_id=locked.pk, event="nodes_appended", org_node=RELAY_ORG_NODE,
                       new_node_ids=[node["node_id"]], manifest_version=locked.manifest_version)
        node_states_emit(run_id=locked.pk, rows=[created])
    run_advance(run_id=run.pk)
    return node["node_id"]


def relay_result(
    *, task: Task, node_id: str, bot_id: str, user: AbstractBaseUser, verdict: str,
    acceptances_metric: list[Any], gaps: list[str], output_patch: dict[str, Any],
) -> ReportOutcome:
    """Post the result of a relay node; only the user and bot that attached it may (``node_report_check``)."""
    run = task_latest_run(task.pk)
    node = manifest_node(run.graph_manifest, node_id) if run is not None else None
    relay = (node or {}).get("relay")
    if not isinstance(relay, dict):
        raise ReportRejected(f"{node_id!r} is not a relay node of the task's run", code="not_a_relay_node")
    success = verdict == "PASS"
    failed_gaps = [gap for gap in gaps if gap.strip()] or [str(item) for item in acceptances_metric] or [
        "the relay's verdict is FAIL"]
    data = {"result": json.dumps(output_patch, ensure_ascii=False, sort_keys=True), "output_patch": output_patch,
            "acceptances_metric": acceptances_metric, "verdict": verdict}
    return node_result_report(task=task, node_id=node_id, success=success, data=data,
                              gaps=[] if success else failed_gaps, reporter=user, bot_id=bot_id)


def _open_relay(run: WorkGraphRun, manifest: dict, *, parent: str) -> tuple[str, dict] | None:
    """The relay node under ``parent`` whose work is still under way, with its owner; None when none is."""
    relays = {node["node_id"]: node["relay"] for node in manifest.get("nodes", [])
              if isinstance(node.get("relay"), dict) and node["relay"].get("parent_node_id") == parent}
    if not relays:
        return None
    for node_id, row in latest_rows(run, node_ids=list(relays)).items():
        if row["status"] in WorkNodeExecution.ACTIVE_STATUSES:
            return node_id, {"user": relays[node_id]["user"], "bot_id": relays[node_id]["bot_id"]}
    return None


def _free_id(ids: list[str]) -> str:
    taken = set(ids)
    number = 1
    while f"{RELAY_NODE_PREFIX}{number}" in taken:
        number += 1
    return f"{RELAY_NODE_PREFIX}{number}"


def _relay_node(node_id: str, *, spec: RelaySpec, parent: str, owner: dict, deadline_seconds: int | None) -> dict:
    criteria = "\n".join(f"- [{item['id']}] {item['acceptance']}" for item in spec.acceptances)
    prompt = "\n\n".join(part for part in (
        f"# {spec.title}", spec.instruction, f"Objective: {spec.objective}",
        f"Acceptance criteria:\n{criteria}" if criteria else "", f"Background: {spec.background}" if spec.background
        else "") if part)
    node = {"node_id": node_id, "depends_on": [], "task_prompt": prompt, "executor": "external",
            "subagent_type": RELAY_ORG_NODE, "title": spec.title,
            "goal": {"objective": spec.objective, "acceptances": [
                {"id": item["id"], "description": item["acceptance"]} for item in spec.acceptances]},
            "relay": {**owner, "parent_node_id": parent, "attached_at": timezone.now().isoformat()}}
    if deadline_seconds:
        node["deadline_seconds"] = deadline_seconds
    return node

