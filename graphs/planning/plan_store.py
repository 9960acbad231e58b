"""Storing what a planning call answered: a fresh run's manifest, or an append merged into its run.

Either is written in one update under the run's row lock, after checking the run was neither cancelled
nor finished meanwhile, or not at all (PlanningFailedError).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph
from graphs.domain.failures import MANIFEST_UNUSABLE
from graphs.logs.events import run_event_emit
from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.planning.append_review import append_review_open
from graphs.planning.planning_node import PlanningFailedError
from graphs.runs.status import run_status_set


def run_fresh_manifest_store(*, run: WorkGraphRun, manifest: dict) -> tuple[WorkGraphRun, list[str]]:
    """Store a fresh run's ``manifest`` and set it awaiting approval or ready; its node_ids."""
    needs_approval = run.task.project.require_plan_approval
    with transaction.atomic():
        locked = WorkGraphRun.objects.select_for_update(no_key=True).filter(pk=run.pk).values(
            "status", "cancel_requested_at")
        current = locked.get()
        if current["cancel_requested_at"] is not None or current["status"] != WorkGraphRun.Status.PLANNING:
            raise PlanningFailedError("the run was cancelled while planning", cancelled=True)
        WorkGraphRun.objects.filter(pk=run.pk).update(graph_manifest=manifest, manifest_version=1)
        run.graph_manifest, run.manifest_version = manifest, 1
        new_ids = manifest_graph.manifest_node_ids(manifest)
        run_event_emit(run_id=run.pk, event="nodes_appended", org_node=None, new_node_ids=new_ids, manifest_version=1)
        status = WorkGraphRun.Status.AWAITING_APPROVAL if needs_approval else WorkGraphRun.Status.READY
        run_status_set(run=run, status=status)
    return run, new_ids


def run_still_open(*, run_id: Any) -> WorkGraphRun:
    """The run an answer that adds no node leaves as it is, once checked under its lock to be neither
    cancelled nor finished meanwhile (as a merge would check)."""
    with transaction.atomic():
        run = WorkGraphRun.objects.select_for_update(no_key=True).select_related("task__project").get(pk=run_id)
        if run.cancel_requested_at is not None:
            raise PlanningFailedError("the run was cancelled while planning", cancelled=True)
        if run.is_finished():
            raise PlanningFailedError(f"run {run_id} became {run.status} while planning")
    return run


def run_append_merge(
    *, run_id: Any, addition: dict, org_node: str, execution: WorkNodeExecution
) -> tuple[WorkGraphRun, list[str]]:
    """Merge ``addition`` into the run under a row lock, re-checking against the manifest as it is now.

    The agent was asked with the node_ids of the moment; another append may have landed since, so
    collisions and limits are checked again inside the lock before anything is written. Where the
    project requires plan approval, the new nodes wait for a reviewer from the same commit on.
    """
    with transaction.atomic():
        run = WorkGraphRun.objects.select_for_update(no_key=True).select_related("task__project").get(pk=run_id)
        if run.cancel_requested_at is not None:
            raise PlanningFailedError("the run was cancelled while planning; nothing was appended", cancelled=True)
        if run.is_finished():
            raise PlanningFailedError(f"run {run_id} became {run.status} while planning; nothing was appended")
        current = run.graph_manifest or {"nodes": [], "edges": []}
        current_graph = manifest_graph.data_dependencies(current)
        try:
            manifest_lib.validate_graph_manifest(
                addition,
                current_graph,
                max_nodes=settings.WORKGRAPH_MAX_NODES - len(current_graph),
                max_depth=settings.WORKGRAPH_MAX_DEPTH,
            )
            merged = manifest_lib.merge_manifests(current, addition)
            depth = manifest_graph.graph_depth(merged)
        except manifest_lib.ManifestError as error:
            raise PlanningFailedError("the appended nodes do not fit the run: " + "; ".join(error.errors),
                                      code=MANIFEST_UNUSABLE) from error
        if depth > settings.WORKGRAPH_MAX_DEPTH:
            raise PlanningFailedError(
                f"the merged graph is {depth} nodes deep, over the limit of {settings.WORKGRAPH_MAX_DEPTH}"
            )
        run.graph_manifest = merged
        run.manifest_version += 1
        run.save(update_fields=["graph_manifest", "manifest_version"])
        new_ids = manifest_graph.manifest_node_ids(addition)
        run_event_emit(
            run_id=run.pk, event="nodes_appended", org_node=org_node, new_node_ids=new_ids,
            manifest_version=run.manifest_version,
        )
        append_review_open(run=run, planning_execution=execution, new_node_ids=new_ids)
    return run, new_ids
