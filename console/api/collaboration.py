"""Endpoints compatible with the task-loop collaboration contract (TaskRequest, dashboard, callback report,
and the relay's bbs/attach and bbs/result)."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from django.db import transaction
from django.http import Http404
from ninja import Field, Router, Schema
from pydantic import ConfigDict, model_validator

from console.api.errors import ApiError
from console.api.schemas import ERRORS, InSchema
from console.permissions import require, task_for_member
from graphs.collaboration.relay import RelaySpec, relay_attach, relay_result
from graphs.collaboration.reports import loop_task_id_parse, node_result_report
from graphs.engine import pipeline_start
from graphs.models import PLANNING_NODE_ID, Project
from graphs.planning.gaps import acceptance_items
from graphs.planning.intake import task_create
from graphs.projects.roles import ACTIONS, project_role
from graphs.reads.task_lists import latest_run_progress
from graphs.runs.facts import latest_by_node, task_latest_run

router = Router(tags=["collaboration"])
# What loop_task_id_parse accepts, for the schema: a task UUID, "::", then a node id.
LOOP_TASK_ID_PATTERN = r"^[0-9A-Fa-f]{8}-?([0-9A-Fa-f]{4}-?){3}[0-9A-Fa-f]{12}::.+$"


class Metadata(InSchema):
    title: str = Field(..., min_length=1, max_length=300)
    instruction: str = Field(..., min_length=1, max_length=20_000)


class Context(InSchema):
    background: str = Field("", max_length=20_000)
    extend_props: dict[str, Any] = {}


class Acceptance(InSchema):
    id: str = Field(..., max_length=50)
    acceptance: str = Field(..., min_length=1, max_length=2000)


class Goal(InSchema):
    objective: str = Field(..., min_length=1, max_length=20_000)
    acceptances: list[Acceptance] = Field(..., min_length=1, max_length=50)


class TaskSpec(InSchema):
    metadata: Metadata
    context: Context = Context()
    goal: Goal


class ExecutionConfig(InSchema):
    model_config = ConfigDict(extra="allow")

    # "yaml" is accepted only to be refused with a message that says why; the schema offers what runs.
    task_type: Literal["dynamic", "workflow", "yaml"] = Field(..., json_schema_extra={"enum": ["dynamic", "workflow"]})
    workflow_id: str = Field("", max_length=200)
    project: str = Field("", max_length=50, description="Project slug; defaults to the caller's only lead project.")
    planning_mode: Literal["graph", "gap_driven"] = Field(
        "graph", description="graph: the planner plans the whole graph; gap_driven: it plans rounds of tasks until"
                             " it answers has_gap false (seed 002's planning contract).")

    @model_validator(mode="after")
    def _workflow_needs_its_id(self) -> ExecutionConfig:
        if self.task_type == "workflow" and not self.workflow_id.strip():
            raise ValueError("execution_config.workflow_id is required when task_type is workflow")
        if self.task_type == "yaml":
            raise ValueError("task_type yaml is not supported by this console; use dynamic or workflow")
        return self


class TaskRequest(InSchema):
    task_spec: TaskSpec
    source_type: Literal["bot", "coop_group", "api"]
    owner_user_id: str = Field("", max_length=200)
    owner_bot_id: str = Field("", max_length=200)
    execution_config: ExecutionConfig


class ReportResult(InSchema):
    success: bool
    data: dict[str, Any] = {}
    gaps: list[str] = Field([], max_length=100)


class ReportIn(InSchema):
    loop_task_id: str = Field(
        ..., max_length=300, description="'<task_id>::<node_id>', as the dashboard lists it for each node.",
        json_schema_extra={"pattern": LOOP_TASK_ID_PATTERN},
    )
    result: ReportResult


class RelayAttachIn(InSchema):
    task_id: UUID
    parent_node_id: str = Field("", max_length=200,
                                description="The node relayed under; empty or the task's id: the task.")
    task_spec: TaskSpec
    bot_id: str = Field(..., min_length=1, max_length=200)
    deadline_seconds: int | None = Field(
        None, ge=1, le=30 * 86_400,
        description="How long the relay may take; default WORKGRAPH_EXTERNAL_DEADLINE_SECONDS.",
    )


class AcceptanceResult(InSchema):
    verdict: Literal["PASS", "FAIL"]
    acceptances_metric: list[Any] = Field([], max_length=100)
    gaps: list[str] = Field([], max_length=100, description="What is missing, for a FAIL.")


class RelayResultIn(InSchema):
    task_id: UUID
    node_id: str = Field(..., min_length=1, max_length=200)
    bot_id: str = Field(..., min_length=1, max_length=200)
    acceptance_result: AcceptanceResult
    output_patch: dict[str, Any] = {}


class Envelope(Schema):
    success: bool
    data: dict[str, Any]


@router.post("/execute", response={200: Envelope, **ERRORS})
def collaboration_execute(request, payload: TaskRequest):
    project = _project_for(request.auth, payload.execution_config.project)
    spec = payload.task_spec
    with transaction.atomic():
        task = task_create(
            project=project,
            title=spec.metadata.title,
            goal_text=spec.goal.objective + ("\n\n" + spec.metadata.instruction if spec.metadata.instruction else ""),
            deliverables=[spec.metadata.instruction],
            acceptance_criteria=[item.acceptance for item in spec.goal.acceptances],
            acceptance_ids=[item.id for item in spec.goal.acceptances],
            constraints=[],
            resources=[spec.context.background] if spec.context.background else [],
            task_type=payload.execution_config.task_type,
            workflow_id=payload.execution_config.workflow_id,
            planning_mode=payload.execution_config.planning_mode,
            created_by=request.auth,
        )
        pipeline_start(task=task)
    task.refresh_from_db()
    return {"success": True, "data": {"task_id": str(task.pk), "status": task.status}}


@router.get("/dashboard", response={200: Envelope, **ERRORS})
def collaboration_dashboard(request, task_id: UUID):
    task, _ = task_for_member(request.auth, task_id)
    run = task_latest_run(task.pk)
    nodes = []
    if run is not None:
        latest = latest_by_node(run.executions.exclude(node_id__startswith=PLANNING_NODE_ID))
        for node in (run.graph_manifest or {}).get("nodes", []):
            row = latest.get(node["node_id"])
            if row is not None:
                nodes.append(_dashboard_node(task, node, row))
    progress = latest_run_progress([task])[task.pk][1]
    acceptances = acceptance_items(task)
    return {
        "success": True,
        "data": {
            "task": {"task_id": str(task.pk), "title": task.title, "status": task.status, "outcome": task.outcome,
                     "goal": {"objective": task.goal_text, "acceptances": acceptances},
                     "acceptance_criteria": task.acceptance_criteria, "planning_mode": task.planning_mode},
            "run": {"run_id": str(run.run_id), "status": run.status} if run else None,
            "progress": progress.as_dict(),
            "nodes": nodes,
        },
    }


def _dashboard_node(task, node: dict, row) -> dict[str, Any]:
    """One node as seed 002's dashboard lists it: its goal, and its latest attempt under ``run_info``
    (``output`` also at the top, as before); a node waiting for its report says so, with its prompt."""
    output = (row.output_payload or {}).get("text", "")
    waiting = row.is_waiting_for_report()
    run_info = {"status": row.status, "attempt": row.attempt, "output": output, "judgment": row.judgment_result,
                "error": row.error, "executor": node.get("executor", "agent"),
                "run_mode": "bbs" if isinstance(node.get("relay"), dict) else "engine",
                "waiting_for_report": waiting, "deadline_at": row.deadline_at.isoformat() if waiting else None,
                "instruction": (row.input_payload or {}).get("prompt", "") if waiting else ""}
    goal = node.get("goal") if isinstance(node.get("goal"), dict) else {"objective": node.get("title", ""),
                                                                         "acceptances": []}
    return {"node_id": node["node_id"], "loop_task_id": f"{task.pk}::{node['node_id']}",
            "title": node.get("title", node["node_id"]), "goal": goal, "status": row.status, "attempt": row.attempt,
            "output": output, "judgment": row.judgment_result, "error": row.error, "run_info": run_info}


@router.post("/callback/report", response={200: Envelope, **ERRORS})
def collaboration_report(request, payload: ReportIn):
    task_id, node_id = loop_task_id_parse(payload.loop_task_id)
    task, role = task_for_member(request.auth, task_id)
    require(role, "start_run")
    outcome = node_result_report(
        task=task, node_id=node_id, success=payload.result.success, data=payload.result.data,
        gaps=payload.result.gaps, reporter=request.auth,
    )
    return {"success": True, "data": {"node_exec_id": outcome.node_exec_id, "status": outcome.status,
                                      "changed": outcome.changed}}


@router.post("/bbs/attach", response={200: Envelope, **ERRORS})
def collaboration_relay_attach(request, payload: RelayAttachIn):
    task, role = task_for_member(request.auth, payload.task_id)
    require(role, "start_run")
    spec = payload.task_spec
    node_id = relay_attach(
        task=task, parent_node_id=payload.parent_node_id, bot_id=payload.bot_id, user=request.auth,
        deadline_seconds=payload.deadline_seconds,
        spec=RelaySpec(title=spec.metadata.title, instruction=spec.metadata.instruction, objective=spec.goal.objective,
                       acceptances=[item.dict() for item in spec.goal.acceptances], background=spec.context.background),
    )
    return {"success": True, "data": {"node_id": node_id, "loop_task_id": f"{task.pk}::{node_id}"}}


@router.post("/bbs/result", response={200: Envelope, **ERRORS})
def collaboration_relay_result(request, payload: RelayResultIn):
    task, role = task_for_member(request.auth, payload.task_id)
    require(role, "start_run")
    result = payload.acceptance_result
    outcome = relay_result(
        task=task, node_id=payload.node_id, bot_id=payload.bot_id, user=request.auth, verdict=result.verdict,
        acceptances_metric=result.acceptances_metric, gaps=result.gaps, output_patch=payload.output_patch,
    )
    return {"success": True, "data": {"node_exec_id": outcome.node_exec_id, "status": outcome.status,
                                      "changed": outcome.changed}}


def _project_for(user, slug: str) -> Project:
    leads = Project.objects.filter(memberships__user=user, memberships__role__in=ACTIONS["create_task"])
    if slug:
        project = Project.objects.filter(slug=slug).first()
        if project is None or project_role(user, project.pk) is None:
            raise Http404("no such project")
        require(project_role(user, project.pk), "create_task")
        return project
    candidates = list(leads[:2])
    if len(candidates) != 1:
        raise ApiError(400, "project_required", "name the project in execution_config.project")
    return candidates[0]
