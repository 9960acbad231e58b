"""Tasks."""

from __future__ import annotations

from uuid import UUID

from django.core.paginator import Paginator
from django.http import Http404
from ninja import Field, Query, Router, Status

from console.api.errors import ApiError
from console.api.schemas import ERRORS, AcceptedOut, BudgetIn, InSchema, PlanIn, TaskOut, TaskPage
from console.api.task_schemas import TaskIn
from console.permissions import require, task_for_member
from graphs.engine import plan_fresh
from graphs.engine.next_run import task_run_anew
from graphs.models import Project, Task
from graphs.planning.dag_specs import task_dag_spec
from graphs.planning.intake import task_create
from graphs.projects.roles import project_role
from graphs.reads.task_lists import tasks_for_user, tasks_spend

router = Router(tags=["tasks"])
MAX_PAGE_SIZE = 100


class TaskFilters(InSchema):
    project: str = ""
    status: str = Field("", json_schema_extra={"enum": ["", *Task.Status.values]})
    q: str = ""
    page: int = 1
    # Declared here, checked below: the check answers with its own error code.
    page_size: int = Field(25, json_schema_extra={"minimum": 1, "maximum": MAX_PAGE_SIZE})


@router.get("/tasks", response={200: TaskPage, **ERRORS})
def tasks_list(request, filters: Query[TaskFilters]):
    if not 1 <= filters.page_size <= MAX_PAGE_SIZE:
        raise ApiError(400, "bad_page_size", f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    if filters.status and filters.status not in Task.Status.values:
        raise ApiError(400, "bad_status", f"status must be one of {', '.join(Task.Status.values)}")
    tasks = tasks_for_user(request.auth, project_slug=filters.project, status=filters.status, text=filters.q)
    paginator = Paginator(tasks, filters.page_size)
    page = paginator.get_page(filters.page)
    return {"items": _with_spend(list(page.object_list)), "count": paginator.count, "page": page.number,
            "pages": paginator.num_pages}


@router.post("/tasks", response={201: TaskOut, **ERRORS})
def tasks_create(request, payload: TaskIn):
    project = Project.objects.filter(slug=payload.project).first()
    role = project_role(request.auth, project.pk) if project else None
    if role is None:
        raise Http404("no such project")
    require(role, "create_task")
    data = payload.dict()
    data.pop("project")
    task = task_create(project=project, created_by=request.auth, **data)
    return Status(201, _with_spend([task])[0])


@router.get("/tasks/{task_id}", response={200: TaskOut, **ERRORS})
def tasks_detail(request, task_id: UUID):
    task, _ = task_for_member(request.auth, task_id)
    return _with_spend([task])[0]


@router.post("/tasks/{task_id}/plan", response={202: AcceptedOut, **ERRORS})
def tasks_plan(request, task_id: UUID, payload: PlanIn | None = None):
    task, role = task_for_member(request.auth, task_id)
    require(role, "plan")
    payload = payload or PlanIn()
    plan_fresh(task=task, org_node=payload.org_node, max_cost_usd=payload.max_cost_usd)
    return Status(202, {"detail": f"the {payload.org_node} is planning the task"})


@router.post("/tasks/{task_id}/pipeline", response={202: AcceptedOut, **ERRORS})
def tasks_pipeline(request, task_id: UUID, payload: BudgetIn | None = None):
    task, role = task_for_member(request.auth, task_id)
    require(role, "start_run")
    # A task imported from a DAG spec runs its spec again, never the generic pipeline.
    imported = task_dag_spec(task) is not None
    task_run_anew(task=task, max_cost_usd=payload.max_cost_usd if payload else None)
    detail = "a new run of the imported spec was made" if imported else "the pipeline has started"
    return Status(202, {"detail": detail})


def _with_spend(tasks: list[Task]) -> list[Task]:
    """The tasks, each with what its runs cost (one query for all of them)."""
    spend = tasks_spend(tasks)
    for task in tasks:
        task.spend = spend[task.pk]
    return tasks
