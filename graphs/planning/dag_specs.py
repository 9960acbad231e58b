"""Importing a loop-agent DAG spec as a task with a planned run, running it again, and reading an imported one back.

The spec is checked (graphs.planning.dag_spec_check) and translated (graphs.planning.dag_spec_plan) as a
whole before anything is written: an import with any problem writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from graphs.domain import manifest_graph, manifest_nodes
from graphs.domain.storable import storable
from graphs.models import DagSpec, Project, Task, WorkGraphRun, WorkNodeExecution, planning_node_id
from graphs.planning.dag_spec_check import DagSpecError
from graphs.planning.dag_spec_plan import dag_spec_plan
from graphs.planning.intake import task_create
from graphs.runs.status import run_status_set, task_claim_for_new_run, task_status_refresh

# The org node an import's planning record names, and that owns the nodes no role runs (gates, commands).
IMPORT_ORG_NODE = "dag_spec"


def dag_spec_import(
    *,
    project: Project,
    spec: Mapping[str, Any],
    prompt_files: Mapping[str, str] | None = None,
    source_name: str = "",
    imported_by: AbstractBaseUser | None = None,
) -> WorkGraphRun:
    """Create a task and its planned run from ``spec``, keeping the spec on the run.

    The run is ``awaiting_approval`` when the project requires plan approval, else ``ready``. The import
    is recorded as the run's planning node, as a planning call would be, so the planning inspector shows
    a reviewer the spec and the manifest made from it. All of it is written in one transaction, after
    the whole spec was checked: an invalid spec (DagSpecError) writes nothing.
    """
    plan = dag_spec_plan(spec, prompt_files=prompt_files)
    with transaction.atomic():
        task = task_create(
            project=project, created_by=imported_by, title=plan.title, goal_text=plan.goal_text,
            acceptance_criteria=plan.acceptance_criteria, constraints=plan.constraints,
            task_type=Task.TaskType.WORKFLOW, workflow_id=plan.title,
        )
        return _spec_run_create(task=task, manifest=plan.manifest, spec=spec, prompt_files=prompt_files,
                                source_name=source_name, imported_by=imported_by)


def task_dag_spec(task: Task) -> DagSpec | None:
    """The spec the task was imported from (its newest run's that has one), or None for a planned task."""
    return DagSpec.objects.filter(run__task=task).order_by("-run__created_at").first()


def dag_spec_run_again(*, task: Task, max_cost_usd: Decimal | None = None) -> WorkGraphRun:
    """A new run of the spec ``task`` was imported from: the same import, translated again, as a new run
    beside the earlier ones — ``awaiting_approval`` when the project requires plan approval, else ``ready``.

    Refused (``TaskBusyError``) while another run of the task is under way; a task that was not imported
    from a spec is refused (``DagSpecError``). The new run keeps the spec too, so it reads and downloads
    as the import did.
    """
    stored = task_dag_spec(task)
    if stored is None:
        raise DagSpecError(["the task was not imported from a DAG spec"])
    plan = dag_spec_plan(stored.spec, prompt_files=stored.prompt_files)
    with transaction.atomic():
        return _spec_run_create(task=task, manifest=plan.manifest, spec=stored.spec, prompt_files=stored.prompt_files,
                                source_name=stored.source_name, imported_by=stored.imported_by,
                                max_cost_usd=max_cost_usd)


def _spec_run_create(*, task: Task, manifest: dict[str, Any], spec: Mapping[str, Any],
                     prompt_files: Mapping[str, str] | None, source_name: str,
                     imported_by: AbstractBaseUser | None, max_cost_usd: Decimal | None = None) -> WorkGraphRun:
    """The task's run of ``spec`` (call inside a transaction): claimed, recorded, planned."""
    project = task.project
    task_claim_for_new_run(task_id=task.pk)
    run = WorkGraphRun.objects.create(
        task=task, status=WorkGraphRun.Status.PLANNING, graph_manifest=storable(manifest), manifest_version=1,
        max_cost_usd=max_cost_usd if max_cost_usd is not None else project.max_run_cost_usd,
    )
    DagSpec.objects.create(run=run, source_name=source_name[:255], spec=storable(dict(spec)),
                           prompt_files=storable(dict(prompt_files or {})), imported_by=imported_by)
    _planning_record(run=run, spec=spec, manifest=manifest, source_name=source_name)
    planned = WorkGraphRun.Status.AWAITING_APPROVAL if project.require_plan_approval else WorkGraphRun.Status.READY
    run_status_set(run=run, status=planned)
    task_status_refresh(task_id=task.pk)
    return run


def dag_spec_run_warnings(run: WorkGraphRun) -> list[str]:
    """What the imported run cannot do as its project stands: its command nodes, in a project that does
    not allow commands, fail ``commands_disabled`` without running. Empty when nothing stands in its way."""
    if run.task.project.allow_commands:
        return []
    commands = [entry["node_id"] for entry in manifest_nodes.manifest_commands(run.graph_manifest)]
    if not commands:
        return []
    return [
        f"the project does not allow commands, so the shell tasks {', '.join(commands)} will fail "
        "(commands_disabled) without running; a project admin can turn on allow_commands for the project"
    ]


def _planning_record(*, run: WorkGraphRun, spec: Mapping[str, Any], manifest: dict[str, Any],
                     source_name: str) -> WorkNodeExecution:
    """The run's ``__planning__`` node for an import: the spec where an agent's response would be."""
    now = timezone.now()
    return WorkNodeExecution.objects.create(
        run=run, node_id=planning_node_id(), subagent_type=IMPORT_ORG_NODE, attempt=1,
        cause=WorkNodeExecution.Cause.PLANNING, status=WorkNodeExecution.Status.SUCCEEDED,
        ready_at=now, started_at=now, finished_at=now,
        input_payload={"org_node": IMPORT_ORG_NODE, "prompt": "", "append": False,
                       "imported_from": source_name or "a DAG spec"},
        output_payload=storable({
            "raw_response": json.dumps(spec, indent=2, ensure_ascii=False), "repair_prompt": None,
            "repair_response": None, "extracted_manifest": None, "manifest": manifest,
            "normalization_notes": [], "validation_errors": [],
            "new_node_ids": manifest_graph.manifest_node_ids(manifest), "usage": [], "agent_calls": [],
        }),
    )


def run_dag_spec(run: WorkGraphRun, *, documents: bool = True) -> DagSpec | None:
    """The spec ``run`` was imported from — a fork's is its origin's — or None when it was planned. Without
    ``documents``, its spec and prompt files are left unread: what names it (a 10,000-task spec is megabytes)."""
    seen: set[Any] = set()
    current: WorkGraphRun | None = run
    specs = DagSpec.objects.all() if documents else DagSpec.objects.defer("spec", "prompt_files")
    while current is not None and current.pk not in seen:
        seen.add(current.pk)
        found = specs.filter(run_id=current.pk).first()
        if found is not None or current.forked_from_id is None:
            return found
        current = WorkGraphRun.objects.filter(pk=current.forked_from_id).only("run_id", "forked_from_id").first()
    return None


def dag_spec_download(spec: DagSpec) -> tuple[bytes, str]:
    """The spec as a JSON file to download: its bytes and a file name."""
    name = PurePosixPath(spec.source_name).name if spec.source_name else ""
    if not name.lower().endswith(".json"):
        name = f"dag-spec-{spec.run_id}.json"
    return (json.dumps(spec.spec, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), name

