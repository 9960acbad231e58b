"""Server-rendered console pages and their form actions. Live parts are enhanced by static/js."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header, url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from console.forms import BudgetForm, DagSpecForm, ForkForm, ReviewForm, RunFilterForm, TaskForm
from console.permissions import can, execution_for_member, require, run_for_member, task_for_member
from graphs import selectors
from graphs.accounting import spend_of
from graphs.append_review import APPEND_STAGE, run_appends_shown, run_approval_wait
from graphs.attempt_words import attempt_cause_text
from graphs.case_manifests import acceptance_criteria_with_ids
from graphs.catalogs import ORG_NODES
from graphs.comparisons import attempt_pair_problem, attempts_comparison, run_pair_problem, runs_comparison
from graphs.dag_specs import (
    DagSpecError,
    dag_spec_download,
    dag_spec_import,
    dag_spec_parse,
    dag_spec_prompt_files_check,
    dag_spec_run_warnings,
    run_dag_spec,
)
from graphs.engine import EngineError, pipeline_start, plan_fresh, run_cancel, run_fork, run_start
from graphs.errors import WorkGraphError
from graphs.failures import FailureClassification
from graphs.log_lines import log_line_summary
from graphs.logs import log_read, log_texts
from graphs.models import (
    AttemptChange,
    ExecutionLogFile,
    Project,
    ProjectMembership,
    RunWorkspace,
    Task,
    WorkGraphRun,
)
from graphs.review import run_plan_approve, run_plan_reject
from graphs.run_layouts import run_graph_with_layout
from graphs.task_service import task_create
from graphs.trace import attempt_trace_header
from graphs.workspaces import change_diff, repository_of

TASKS_PER_PAGE = 25
RUNS_PER_PAGE = 25
LOG_LINES_ON_PAGE = 2000


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    projects = list(selectors.projects_for_user(request.user))
    project_spend = selectors.projects_spend(projects)
    recent = list(selectors.tasks_for_user(request.user)[:10])
    progress = selectors.latest_run_progress(recent)
    spend = selectors.tasks_spend(recent)
    return render(
        request,
        "console/dashboard.html",
        {
            # The project's folder is on its own page, for those who may see it; the dashboard is for reading.
            "projects": [(project, project_spend[project.pk]) for project in projects],
            "recent": [(task, *progress[task.pk], spend[task.pk]) for task in recent],
            "in_flight": selectors.runs_in_flight(request.user)[:20],
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
    recent = list(selectors.tasks_for_user(request.user, project_slug=project.slug)[:10])
    progress = selectors.latest_run_progress(recent)
    spend = selectors.tasks_spend(recent)
    return render(
        request,
        "console/project_detail.html",
        {"project": project, "role": role, "can_import": can_import, "form": form, "problems": problems,
         "folder_shown": can(role, "see_target_folder"),
         "recent": [(task, *progress[task.pk], spend[task.pk]) for task in recent]},
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
    role = selectors.project_role(request.user, project.pk) if project else None
    if role is None:
        raise Http404("not found")
    return project, role


@login_required
def task_list(request: HttpRequest) -> HttpResponse:
    filters = {
        "project_slug": request.GET.get("project", "")[:100],
        "status": request.GET.get("status", "") if request.GET.get("status") in Task.Status.values else "",
        "text": request.GET.get("q", "")[:200],
    }
    page = Paginator(selectors.tasks_for_user(request.user, **filters), TASKS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    tasks = list(page.object_list)
    progress = selectors.latest_run_progress(tasks)
    spend = selectors.tasks_spend(tasks)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "console/task_list.html",
        {
            "page": page,
            "rows": [(task, *progress[task.pk], spend[task.pk]) for task in tasks],
            "projects": selectors.projects_for_user(request.user),
            "statuses": Task.Status.choices,
            "filters": filters,
            "query": query.urlencode(),
            "can_create": _lead_projects(request).exists(),
        },
    )


@login_required
def run_list(request: HttpRequest) -> HttpResponse:
    """Every run the user may see, across tasks and projects, newest first, filtered by the query string."""
    projects = list(selectors.projects_for_user(request.user))
    form = RunFilterForm(request.GET, projects=projects)
    runs = selectors.runs_for_user(request.user, **form.selector_filters())
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "console/run_list.html",
        {"page": page, "rows": selectors.run_rows(list(page.object_list)), "form": form, "org_nodes": ORG_NODES,
         "query": query.urlencode()},
    )


@login_required
def task_new(request: HttpRequest) -> HttpResponse:
    projects = _lead_projects(request)
    if not projects.exists():
        require(None, "create_task")
    form = TaskForm(request.POST or None, projects=projects)
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
    task, role = task_for_member(request.user, task_id)
    trees = selectors.task_run_trees(task)
    artifacts = list(task.artifacts.select_related("node_exec", "run").defer("run__graph_manifest")
                     .order_by("-created_at"))
    return render(
        request,
        "console/task_detail.html",
        {
            "task": task,
            "role": role,
            "trees": trees,
            "spend": selectors.task_spend(task),
            "artifacts": artifacts,
            "criteria": acceptance_criteria_with_ids(task.acceptance_criteria),
            "coverage": selectors.task_criteria_coverage(task, artifacts),
            "can_plan": can(role, "plan"),
            "can_start": can(role, "start_run"),
            "can_cancel": can(role, "cancel_run"),
            "can_fork": can(role, "fork_run"),
            "can_review": can(role, "review_plan"),
            # The fetch command names the project's folder, a path on the agents' machine: leads only.
            "folder_shown": can(role, "see_target_folder"),
            "live_run_ids": [tree.run.run_id for tree in trees if not tree.run.is_finished()],
        },
    )


@login_required
@require_POST
def task_plan(request: HttpRequest, task_id) -> HttpResponse:
    task, role = task_for_member(request.user, task_id)
    require(role, "plan")
    _carry_out(request, lambda: plan_fresh(task=task), "The planner is planning this task.", level=messages.INFO)
    return redirect("task_detail", task_id=task.pk)


@login_required
@require_POST
def task_pipeline(request: HttpRequest, task_id) -> HttpResponse:
    task, role = task_for_member(request.user, task_id)
    require(role, "start_run")
    budget = BudgetForm(request.POST)
    if not budget.is_valid():
        messages.error(request, f"The budget was refused: {_form_errors(budget)}")
        return redirect("task_detail", task_id=task.pk)
    _carry_out(request, lambda: pipeline_start(task=task, max_cost_usd=budget.cleaned_data["max_cost_usd"]),
               "The pipeline has started: planner, then coder, then validator.", level=messages.INFO)
    return redirect("task_detail", task_id=task.pk)


@login_required
def run_graph(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    workspace = RunWorkspace.objects.filter(run=run).first()
    return render(
        request,
        "console/run_graph.html",
        {"run": run, "task": run.task, "role": role, "can_fork": can(role, "fork_run") and run.is_forkable(),
         "can_cancel": can(role, "cancel_run"), "can_start": can(role, "start_run"),
         "can_review": can(role, "review_plan"), "spend": spend_of(run.executions.all()),
         "workspace": workspace, "changed_files": selectors.run_changed_files(run, workspace) if workspace else [],
         "dag_spec": run_dag_spec(run),
         "diff_shown": _diff_shown(workspace), "approval_wait": run_approval_wait(run)},
    )


@login_required
def run_dag_spec_download(request: HttpRequest, run_id) -> HttpResponse:
    run, _ = run_for_member(request.user, run_id)
    return dag_spec_file(run)


def dag_spec_file(run: WorkGraphRun) -> HttpResponse:
    """The DAG spec the run (or the run it was forked from) was imported from, as a JSON file; the page
    and the API answer with it alike."""
    spec = run_dag_spec(run)
    if spec is None:
        raise Http404("the run was not imported from a DAG spec")
    content, filename = dag_spec_download(spec)
    response = HttpResponse(content, content_type="application/json")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


@login_required
def run_diff_download(request: HttpRequest, run_id) -> HttpResponse:
    """The run branch's whole change against its base, as a patch."""
    run, _ = run_for_member(request.user, run_id)
    workspace = RunWorkspace.objects.filter(run=run).first()
    if workspace is None:
        raise Http404("this run's project is not a git repository: nothing was recorded")
    patch = change_diff(workspace.repository, workspace.base_commit, workspace.head_commit, stored=workspace.diff,
                        size=workspace.diff_bytes)
    return _patch_response(patch, filename=f"{workspace.branch.replace('/', '-')}.patch")


@login_required
def execution_diff_download(request: HttpRequest, node_exec_id) -> HttpResponse:
    """One attempt's change as a patch."""
    execution, _ = execution_for_member(request.user, node_exec_id)
    change = AttemptChange.objects.filter(node_exec=execution).select_related("run__workspace").first()
    if change is None or not change.result_commit:
        raise Http404("this attempt recorded no change")
    patch = change_diff(change.run.workspace.repository, change.base_commit, change.result_commit,
                        stored=change.diff, size=change.diff_bytes)
    return _patch_response(patch, filename=f"{execution.node_id}-{execution.attempt}.patch")


def _patch_response(patch: bytes, *, filename: str) -> HttpResponse:
    # text/plain, never rendered: a diff is agent-written text.
    response = HttpResponse(patch, content_type="text/x-diff; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _diff_shown(change: RunWorkspace | AttemptChange | None) -> dict[str, Any] | None:
    """What of a change's diff a page shows (up to WORKGRAPH_DIFF_PAGE_BYTES), and whether it is cut."""
    if change is None or not change.diff:
        return None
    limit = settings.WORKGRAPH_DIFF_PAGE_BYTES
    shown = change.diff[:limit]
    return {"text": shown, "cut": len(shown.encode()) < change.diff_bytes, "bytes": change.diff_bytes}


@login_required
def run_graph_json(request: HttpRequest, run_id) -> JsonResponse:
    run, _ = run_for_member(request.user, run_id)
    return JsonResponse(run_graph_with_layout(run=run))


@login_required
@require_POST
def run_start_view(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "start_run")
    budget = BudgetForm(request.POST)
    if not budget.is_valid():
        messages.error(request, f"The budget was refused: {_form_errors(budget)}")
        return redirect("task_detail", task_id=run.task_id)
    return _act(request, run, lambda: run_start(run=run, max_cost_usd=budget.cleaned_data["max_cost_usd"]),
                "The run has started.")


@login_required
@require_POST
def run_cancel_view(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "cancel_run")
    return _act(request, run, lambda: run_cancel(run=run), "The run is being cancelled.")


@login_required
@require_POST
def run_fork_view(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "fork_run")
    form = ForkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the node to fork from.")
        return redirect("task_detail", task_id=run.task_id)
    try:
        fork = run_fork(run=run, node_id=form.cleaned_data["node_id"])
    except (EngineError, WorkGraphError) as error:
        messages.error(request, str(error))
        return redirect("task_detail", task_id=run.task_id)
    node_id = form.cleaned_data["node_id"]
    messages.success(request, f"Forked from {node_id}: only that node and its dependants run again.")
    return redirect("run_graph", run_id=fork.run_id)


@login_required
@require_POST
def run_review_view(request: HttpRequest, run_id, decision: str) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "review_plan")
    form = ReviewForm(request.POST)
    comment = form.cleaned_data["comment"] if form.is_valid() else ""
    if decision == "reject" and not comment.strip():
        messages.error(request, "Say why the plan is rejected.")
        return redirect("run_planning", run_id=run.run_id)
    wait = run_approval_wait(run)
    append = wait.label if wait is not None and wait.stage == APPEND_STAGE else None
    if decision == "reject":
        return _act(request, run, lambda: run_plan_reject(run=run, reviewer=request.user, comment=comment),
                    f"Rejected {append}: the run has failed." if append else "Plan rejected.", to="run_planning")
    # "Approve and run": a reviewer who may also start runs starts this one with the approval.
    start = bool(request.POST.get("start")) and can(role, "start_run")

    def approve() -> None:
        approved = run_plan_approve(run=run, reviewer=request.user, comment=comment)
        if start and approved.status == WorkGraphRun.Status.READY:
            run_start(run=approved)

    if append:
        success = f"Approved {append}: its nodes go on with the run."
    elif start or run.pipeline:
        success = "Plan approved; the run has started."
    else:
        success = "Plan approved. A lead starts the run."
    # An approved run is watched on its graph, whichever page it was approved on.
    return _act(request, run, approve, success, to="run_graph", go_back=False)


@login_required
def run_planning(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    appends = run_appends_shown(run)
    append_of_call = {append.review.planning_execution_id: append for append in appends}
    # Appends left pending by a run that ended (cancelled while they waited) wait for nothing any more.
    approval_wait = run_approval_wait(run)
    return render(
        request,
        "console/run_planning.html",
        {
            "run": run,
            "task": run.task,
            "calls": [{**_planning_call_view(call), "append": append_of_call.get(call["node_exec_id"])}
                      for call in selectors.planning_calls(run)],
            "commands": selectors.plan_commands(run),
            "approval_wait": approval_wait,
            "appends_waiting": [append for append in appends if append.waiting] if approval_wait else [],
            "can_review": can(role, "review_plan"),
            "can_start": can(role, "start_run"),
            "can_cancel": can(role, "cancel_run"),
            "graph_url": f"/runs/{run.run_id}/graph.json",
        },
    )


@login_required
def execution_detail(request: HttpRequest, node_exec_id) -> HttpResponse:
    execution, _ = execution_for_member(request.user, node_exec_id)
    if execution.is_planning:
        return redirect(f"/runs/{execution.run_id}/planning/#call-{execution.pk}")
    attempts = execution.run.executions.filter(node_id=execution.node_id).order_by("attempt")
    log_file = ExecutionLogFile.objects.filter(node_exec=execution).first()
    lines = log_read(log_file=log_file, limit=LOG_LINES_ON_PAGE) if log_file else []
    change = AttemptChange.objects.filter(node_exec=execution).select_related("run__workspace").first()
    return render(
        request,
        "console/execution_detail.html",
        {
            "execution": execution,
            "run": execution.run,
            "task": execution.run.task,
            "attempts": attempts,
            "log_file": log_file,
            "lines": [(line, log_line_summary(line)) for line in lines],
            "trace_lines": lines,
            "trace_header": attempt_trace_header(execution=execution),
            "cause_text": attempt_cause_text(execution.cause, execution.cause_node_id),
            "last_seq": lines[-1]["seq"] if lines else 0,
            # Lines may still come: the log is being written (or not begun), or it is longer than a page.
            "follow": log_file is None or log_file.status == ExecutionLogFile.Status.OPEN
            or len(lines) >= LOG_LINES_ON_PAGE,
            "input_json": _pretty(execution.input_payload),
            "judgment_json": _pretty(execution.judgment_result) if execution.judgment_result else "",
            "failure": FailureClassification.from_dict(execution.failure),
            "change": change,
            "diff_shown": _diff_shown(change),
            "isolated": change is not None or repository_of(execution.run.task.project.target_folder) is not None,
        },
    )


@login_required
def attempts_compare(request: HttpRequest, node_exec_id, other_exec_id) -> HttpResponse:
    """Two attempts of one node side by side: what went in, what came out, and how they differ."""
    first, _ = execution_for_member(request.user, node_exec_id)
    second, _ = execution_for_member(request.user, other_exec_id)
    # The earlier attempt on the left, whichever way round the link names them.
    old, new = sorted((first, second), key=lambda attempt: (attempt.run.created_at, attempt.attempt))
    problem = attempt_pair_problem(old=old, new=new)
    if problem:
        # A hand-edited or stale link: the page says why and links both attempts.
        return render(request, "console/compare_attempts.html", {"problem": problem, "old": old, "new": new},
                      status=404)
    return render(
        request,
        "console/compare_attempts.html",
        {
            "comparison": attempts_comparison(old=old, new=new),
            "old": old,
            "new": new,
            "task": new.run.task,
            "old_label": f"attempt {old.attempt}",
            "new_label": f"attempt {new.attempt}",
            "old_calls": attempt_trace_header(execution=old),
            "new_calls": attempt_trace_header(execution=new),
            "old_cause": attempt_cause_text(old.cause, old.cause_node_id),
            "new_cause": attempt_cause_text(new.cause, new.cause_node_id),
        },
    )


@login_required
def runs_compare(request: HttpRequest, run_id, other_run_id) -> HttpResponse:
    """Two runs of one task side by side: the nodes each manifest has, their latest outcomes, the costs."""
    first, _ = run_for_member(request.user, run_id)
    second, _ = run_for_member(request.user, other_run_id)
    # The older run on the left: a change reads as what the newer run did differently.
    old, new = sorted((first, second), key=lambda run: run.created_at)
    problem = run_pair_problem(old=old, new=new)
    if problem:
        return render(request, "console/compare_runs.html", {"problem": problem, "old": old, "new": new},
                      status=404)
    return render(request, "console/compare_runs.html",
                  {"comparison": runs_comparison(old=old, new=new), "old": old, "new": new, "task": new.task})


@login_required
def execution_json(request: HttpRequest, node_exec_id) -> JsonResponse:
    """What the run graph's side panel shows for one attempt: prompt, output, judgment, every attempt."""
    execution, _ = execution_for_member(request.user, node_exec_id)
    return JsonResponse(selectors.execution_detail(execution))


@login_required
def execution_log_download(request: HttpRequest, node_exec_id) -> StreamingHttpResponse:
    """The attempt's whole log as JSONL, streamed from the store a slice at a time."""
    execution, _ = execution_for_member(request.user, node_exec_id)
    log_file = ExecutionLogFile.objects.filter(node_exec=execution).first()
    if log_file is None:
        raise Http404("this execution has no log yet")
    response = StreamingHttpResponse(log_texts(log_file=log_file), content_type="application/x-ndjson")
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=f"{execution.node_id}-{execution.attempt}.jsonl"
    )
    return response


def _carry_out(request: HttpRequest, action, success: str, *, level: int = messages.SUCCESS) -> None:
    """Run ``action``; tell the person ``success``, or why the console refused."""
    try:
        action()
    except WorkGraphError as error:
        messages.error(request, str(error))
    else:
        messages.add_message(request, level, success)


def _act(
    request: HttpRequest, run: WorkGraphRun, action, success: str, *, to: str = "task_detail", go_back: bool = True
) -> HttpResponse:
    """Carry out ``action``; then go back to the page the form was on (its ``next``), else to ``to``."""
    _carry_out(request, action, success)
    back = request.POST.get("next", "") if go_back else ""
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure()):
        return redirect(back)
    if to in ("run_planning", "run_graph"):
        return redirect(to, run_id=run.run_id)
    return redirect("task_detail", task_id=run.task_id)


def _form_errors(form: forms.Form) -> str:
    return " ".join(str(error) for errors in form.errors.values() for error in errors)


def _lead_projects(request: HttpRequest):
    return selectors.projects_for_user(request.user).filter(
        memberships__user=request.user, memberships__role=ProjectMembership.Role.LEAD
    )


def _planning_call_view(call: dict[str, Any]) -> dict[str, Any]:
    return {
        **call,
        "manifest_json": _pretty(call["manifest"]) if call["manifest"] else "",
        "extracted_json": _pretty(call["extracted_manifest"]) if call["extracted_manifest"] else "",
        "notes": call["normalization_notes"],
        "errors": call["validation_errors"],
    }


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def login_locked_out(request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None):
    """What django-axes answers a sign-in while its username or address is locked out."""
    minutes = round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    return render(request, "registration/locked_out.html", {"minutes": minutes}, status=429)
