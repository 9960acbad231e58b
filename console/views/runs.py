"""A run's pages: its graph (and the graph.json the page draws), and its planning calls."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from console.permissions import can, run_for_member
from console.views.common import diff_shown, pretty_json
from graphs.layout.runs import run_graph_with_layout
from graphs.models import RunWorkspace
from graphs.planning.append_review import run_appends_shown, run_approval_wait
from graphs.planning.dag_specs import run_dag_spec
from graphs.reads.executions import plan_commands, planning_calls
from graphs.reads.runs import run_changed_files
from graphs.runs.accounting import spend_of


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
         "workspace": workspace, "changed_files": run_changed_files(run, workspace) if workspace else [],
         "dag_spec": run_dag_spec(run),
         "diff_shown": diff_shown(workspace), "approval_wait": run_approval_wait(run)},
    )


@login_required
def run_graph_json(request: HttpRequest, run_id) -> JsonResponse:
    run, _ = run_for_member(request.user, run_id)
    return JsonResponse(run_graph_with_layout(run=run))


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
                      for call in planning_calls(run)],
            "commands": plan_commands(run),
            "approval_wait": approval_wait,
            "appends_waiting": [append for append in appends if append.waiting] if approval_wait else [],
            "can_review": can(role, "review_plan"),
            "can_start": can(role, "start_run"),
            "can_cancel": can(role, "cancel_run"),
            "graph_url": f"/runs/{run.run_id}/graph.json",
        },
    )


def _planning_call_view(call: dict[str, Any]) -> dict[str, Any]:
    return {
        **call,
        "manifest_json": pretty_json(call["manifest"]) if call["manifest"] else "",
        "extracted_json": pretty_json(call["extracted_manifest"]) if call["extracted_manifest"] else "",
        "notes": call["normalization_notes"],
        "errors": call["validation_errors"],
    }
