"""The pages people read first: the dashboard, a project, the task and run lists, a task, a new task."""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from console.forms.pages import DagSpecForm, PlanForm, RunFilterForm, TaskForm
from console.permissions import can, require, task_for_member
from console.views.datasets import add_to_dataset_offers
from graphs.delivery.reads import task_delivery_offers
from graphs.domain.case_manifests import acceptance_criteria_with_ids
from graphs.models import Project, Task, WorkGraphRun
from graphs.planning.dag_spec_check import DagSpecError, dag_spec_parse, dag_spec_prompt_files_check
from graphs.planning.dag_specs import dag_spec_import, dag_spec_run_warnings
from graphs.planning.intake import task_create
from graphs.projects.roles import ACTIONS, project_role
from graphs.reads.access import projects_for_user
from graphs.reads.live import runs_fingerprint_read
from graphs.reads.paging import BoundedPaginator
from graphs.reads.run_lists import run_list_org_nodes, run_rows, runs_by_key, runs_for_user, runs_in_flight
from graphs.reads.task_lists import (
    latest_run_progress,
    projects_spend,
    task_criteria_coverage,
    task_spend,
    tasks_for_user,
    tasks_spend,
)
from graphs.reads.task_runs import runs_artifacts, task_outcome, task_run_refusal
from graphs.reads.todo_tree import task_run_trees

TASKS_PER_PAGE = 25
RUNS_PER_PAGE = 25
# The runs list counts this many runs past the page's first, and says "more than" past them: a filter
# matching tens of thousands of runs is counted in what a page costs, not in what reading them all does.
RUNS_COUNTED_AHEAD = 2_500


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    activity = runs_fingerprint_read(user=request.user)  # read first: it never holds a change the lists miss
    projects = list(projects_for_user(request.user))
    project_spend = projects_spend(projects)
    recent = list(tasks_for_user(request.user)[:10])
    progress = latest_run_progress(recent)
    spend = tasks_spend(recent)
    return render(
        request,
        "console/dashboard.html",
        {
            # The project's folder is on its own page, for those who may see it; the dashboard is for reading.
            "projects": [(project, project_spend[project.pk]) for project in projects],
            "recent": [(task, *progress[task.pk], spend[task.pk]) for task in recent],
            "in_flight": runs_in_flight(request.user)[:20],
            "activity": activity,
        },
    )


@login_required
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A project: its tasks, and — for a lead — the import of a DAG spec as a new task and planned run."""
    project, role = _project_for_member(request, slug)
    can_import = can(role, "import_dag_spec")
    form, problems = DagSpecForm(), []
    if request.method == "POST":
        require(role, "import_dag_spec")
        form = DagSpecForm(request.POST, request.FILES)
        if form.is_valid():
            run, problems = _dag_spec_imported(request, project, form.cleaned_data)
            if run is not None:
                status = run.get_status_display().lower()
                messages.success(request, f"Imported {run.task.title!r}: its run is {status}.")
                for warning in dag_spec_run_warnings(run):
                    messages.warning(request, f"{warning[0].upper()}{warning[1:]}.")
                return redirect("run_graph", run_id=run.run_id)
    activity = runs_fingerprint_read(user=request.user)  # read first: it never holds a change the list misses
    recent = list(tasks_for_user(request.user, project_slug=project.slug)[:10])
    progress = latest_run_progress(recent)
    spend = tasks_spend(recent)
    return render(
        request,
        "console/project_detail.html",
        {"project": project, "role": role, "can_import": can_import, "form": form, "problems": problems,
         "folder_shown": can(role, "see_target_folder"), "can_edit": can(role, "edit_project"),
         "can_create_task": can(role, "create_task"), "can_read_audit": can(role, "read_audit"),
         "agent_used": project.agent or settings.WORKGRAPH_AGENT,
         "recent": [(task, *progress[task.pk], spend[task.pk]) for task in recent], "activity": activity},
        status=400 if form.errors or problems else 200,
    )


def _dag_spec_imported(request: HttpRequest, project: Project, data: dict) -> tuple[WorkGraphRun | None, list[str]]:
    """Import the uploaded spec with its prompt files; the run, or None and every problem found."""
    upload = data["spec_file"]
    uploads = {file.name: file for file in data["prompt_files"]}
    try:
        spec = dag_spec_parse(upload.read())
        dag_spec_prompt_files_check(spec, sizes={name: file.size for name, file in uploads.items()})
        prompt_files = {name: file.read().decode("utf-8", errors="replace") for name, file in uploads.items()}
        return dag_spec_import(project=project, spec=spec, prompt_files=prompt_files, source_name=upload.name,
                               imported_by=request.user), []
    except DagSpecError as error:
        return None, error.errors


def _project_for_member(request: HttpRequest, slug: str) -> tuple[Project, str]:
    project = Project.objects.filter(slug=slug).first()
    role = project_role(request.user, project.pk) if project else None
    if role is None:
        raise Http404("not found")
    return project, role


@login_required
def task_list(request: HttpRequest) -> HttpResponse:
    activity = runs_fingerprint_read(user=request.user)  # read first: it never holds a change the list misses
    filters = {
        "project_slug": request.GET.get("project", "")[:100],
        "status": request.GET.get("status", "") if request.GET.get("status") in Task.Status.values else "",
        "text": request.GET.get("q", "")[:200],
    }
    page = Paginator(tasks_for_user(request.user, **filters), TASKS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    tasks = list(page.object_list)
    progress = latest_run_progress(tasks)
    spend = tasks_spend(tasks)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "console/task_list.html",
        {
            "page": page,
            "rows": [(task, *progress[task.pk], spend[task.pk]) for task in tasks],
            "projects": projects_for_user(request.user),
            "statuses": Task.Status.choices,
            "filters": filters,
            "query": query.urlencode(),
            "can_create": _projects_creating_tasks(request).exists(),
            "activity": activity,
        },
    )


@login_required
def run_list(request: HttpRequest) -> HttpResponse:
    """Every run the user may see, across tasks and projects, newest first, filtered by the query string."""
    activity = runs_fingerprint_read(user=request.user)  # read first: it never holds a change the list misses
    projects = list(projects_for_user(request.user))
    form = RunFilterForm(request.GET, projects=projects, org_nodes=run_list_org_nodes(request.user))
    filters = form.selector_filters()
    runs = runs_for_user(request.user, **filters)
    # A search reads its matches once: the count keeps the page's keys, or, past the count, the page is
    # found run by run (graphs.reads.paging.BoundedPaginator).
    searched = {"by_key": partial(runs_by_key, request.user),
                "capped_list": runs_for_user(request.user, **filters, text_per_run=True)} if filters["text"] else {}
    page = BoundedPaginator(runs, RUNS_PER_PAGE, ahead=RUNS_COUNTED_AHEAD, **searched).get_page(
        request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "console/run_list.html",
        {"page": page, "rows": run_rows(list(page.object_list), node_text=filters["text"]), "form": form,
         "query": query.urlencode(), "activity": activity},
    )


@login_required
def task_new(request: HttpRequest) -> HttpResponse:
    projects = _projects_creating_tasks(request)
    if not projects.exists():
        require(None, "create_task")
    # The project page's New task names its project, chosen already.
    chosen = projects.filter(slug=request.GET.get("project", "")).first()
    form = TaskForm(request.POST or None, projects=projects, initial={"project": chosen} if chosen else None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        task = task_create(
            project=data["project"], title=data["title"], goal_text=data["goal_text"],
            deliverables=data["deliverables"], acceptance_criteria=data["acceptance_criteria"],
            constraints=data["constraints"], resources=data["resources"], task_type=data["task_type"],
            workflow_id=data["workflow_id"], skill=data["skill"], planning_mode=data["planning_mode"],
            created_by=request.user,
        )
        messages.success(request, "Task created.")
        return redirect("task_detail", task_id=task.pk)
    return render(request, "console/task_new.html", {"form": form}, status=400 if form.errors else 200)


@login_required
def task_detail(request: HttpRequest, task_id) -> HttpResponse:
    """A task, its runs (the latest open, older ones folded under it) with their artifacts, and its Outcome.
    task-detail.js fetches this page again as the runs move and swaps in what changed; ``activity``, the
    fingerprint of the person's runs, has the inbox socket say when a run may have been made or moved."""
    task, role = task_for_member(request.user, task_id)
    activity = runs_fingerprint_read(user=request.user)  # read first: it never holds a change the page misses
    trees = task_run_trees(task)
    artifacts = list(task.artifacts.select_related("node_exec", "run").defer("run__graph_manifest")
                     .order_by("-created_at"))
    per_run = runs_artifacts(artifacts)
    for tree in trees:
        tree.artifacts = per_run.get(tree.run.pk, [])
    runs = [tree.run for tree in trees]
    return render(
        request,
        "console/task_detail.html",
        {
            "task": task,
            "role": role,
            "trees": trees,
            "spend": task_spend(task),
            "outcome": task_outcome(task, runs),
            "criteria": acceptance_criteria_with_ids(task.acceptance_criteria),
            "coverage": task_criteria_coverage(task, artifacts),
            # An imported task runs its spec again; it has no planner to ask.
            "imported": any(tree.dag_spec for tree in trees),
            "run_refusal": task_run_refusal(runs, imported=any(tree.dag_spec for tree in trees)),
            "can_plan": can(role, "plan"),
            "plan_form": PlanForm(),
            "can_start": can(role, "start_run"),
            "can_cancel": can(role, "cancel_run"),
            "can_fork": can(role, "fork_run"),
            "can_review": can(role, "review_plan"),
            # The fetch command names the project's folder, a path on the agents' machine: leads only.
            "folder_shown": can(role, "see_target_folder"),
            "live_run_ids": [tree.run.run_id for tree in trees if not tree.run.is_finished()],
            "activity": activity,
            "delivery_offers": task_delivery_offers(task.project, runs),
            "can_deliver": can(role, "deliver"),
            **add_to_dataset_offers(project=task.project, role=role, trees=trees),
        },
    )


def _projects_creating_tasks(request: HttpRequest):
    """The user's projects whose role there lets them create tasks, as the role table says."""
    return projects_for_user(request.user).filter(
        memberships__user=request.user, memberships__role__in=ACTIONS["create_task"]
    )
