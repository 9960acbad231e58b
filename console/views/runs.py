"""A run's pages: its graph (and the graph.json the page draws), its planning calls, and a stage's nodes."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_cache_control

from console.permissions import can, run_for_member
from console.views.common import diff_shown, pretty_json
from console.views.datasets import add_to_dataset_offers
from graphs.layout.run_layouts import run_graph_with_layout
from graphs.models import RunWorkspace, WorkGraphRun, WorkNodeExecution
from graphs.planning.append_review import run_appends_shown, run_approval_wait
from graphs.planning.dag_specs import run_dag_spec
from graphs.reads.executions import plan_commands, planning_calls
from graphs.reads.graph_json import graph_compact, run_graph_etag
from graphs.reads.node_panel import node_panel_read
from graphs.reads.run_lists import run_changed_files
from graphs.reads.run_notices import run_notices
from graphs.reads.todo_tree import run_stage
from graphs.runs.accounting import spend_of
from graphs.runs.facts import run_node_total, run_progress_counted

# The page and its live regions count the manifest's nodes in the database and read nothing else of it;
# graph.json reads it only past its tag (a revisit of an unchanged run is answered 304 without it).
UNREAD_BY_THE_PAGE = ("graph_manifest",)


@login_required
def run_graph(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id, defer=UNREAD_BY_THE_PAGE)
    return render(request, "console/run_graph.html", _run_graph_regions(run, role))


@login_required
def run_graph_live(request: HttpRequest, run_id) -> HttpResponse:
    """The run graph page's live regions alone: what its script swaps in when the run reports a change."""
    run, role = run_for_member(request.user, run_id, defer=UNREAD_BY_THE_PAGE)
    response = render(request, "console/run_graph_live.html", _run_graph_regions(run, role))
    patch_cache_control(response, private=True, no_store=True)
    return response


@login_required
def run_node_panel(request: HttpRequest, run_id) -> HttpResponse:
    """The side panel of the node named by ``?node=``: its latest attempt as the server reads it now."""
    run, role = run_for_member(request.user, run_id)
    panel = node_panel_read(run=run, node_id=request.GET.get("node", ""))
    detail = panel.detail
    if detail is not None:
        for attempt in detail["attempts"]:
            attempt["judgment_json"] = pretty_json(attempt["judgment_result"]) if attempt["judgment_result"] else ""
    response = render(request, "console/_node_panel.html", {
        "run": run, "panel": panel, "detail": detail,
        "can_fork": can(role, "fork_run") and run.is_forkable(),
        # An attempt awaiting review is not finished, but its agent is done: its panel is settled too.
        "finished": detail is not None and detail["status"] in (WorkNodeExecution.FINISHED_STATUSES
                                                                | WorkNodeExecution.WAITING_STATUSES),
        "judgment_json": pretty_json(detail["judgment_result"]) if detail and detail["judgment_result"] else "",
    })
    patch_cache_control(response, private=True, no_store=True)
    return response


def _run_graph_regions(run: WorkGraphRun, role: str | None) -> dict[str, Any]:
    workspace = RunWorkspace.objects.filter(run=run).first()
    return {
        "run": run, "task": run.task, "role": role, "can_fork": can(role, "fork_run") and run.is_forkable(),
        "can_cancel": can(role, "cancel_run"), "can_start": can(role, "start_run"),
        "can_review": can(role, "review_plan"), "can_review_change": can(role, "review_change"),
        "spend": spend_of(run.executions.all()),
        "progress": run_progress_counted(run_id=run.pk, total=run_node_total(run)),
        "workspace": workspace, "changed_files": run_changed_files(run, workspace) if workspace else [],
        "dag_spec": run_dag_spec(run, documents=False), "notices": run_notices(run),
        "diff_shown": diff_shown(workspace), "approval_wait": run_approval_wait(run),
        # The controls go back to the page, also when the live regions alone were fetched.
        "next_url": reverse("run_graph", args=[run.run_id]),
        **add_to_dataset_offers(project=run.task.project, role=role, runs=[run]),
    }


@login_required
def run_graph_json(request: HttpRequest, run_id) -> HttpResponse:
    """The run's graph, compact (graphs.reads.graph_json), tagged: a browser that holds the graph as
    it is now is answered 304 and draws what it holds, and checks again on every fetch (no-cache).
    ``?whole=1`` asks for every node's record of a run the page opens folded into stages."""
    run, _ = run_for_member(request.user, run_id, defer=UNREAD_BY_THE_PAGE)
    whole = request.GET.get("whole") == "1"
    # Read before the graph: a change landing in between leaves the body tagged older than it is, so
    # it is fetched again next time; read after, a body could be kept past a change it does not show.
    etag = run_graph_etag(run, whole=whole)
    headers = HttpResponse()
    headers["ETag"] = etag
    patch_cache_control(headers, private=True, no_cache=True)
    not_modified = get_conditional_response(request, etag=etag, response=headers)
    if not_modified is not headers:
        return not_modified
    graph = run_graph_with_layout(run=run, whole=whole)
    response = JsonResponse(graph_compact(graph), json_dumps_params={"separators": (",", ":")})
    patch_cache_control(response, private=True, no_cache=True)
    # A drawing with no layout yet has had one queued by this request: untagged, the next visit asks
    # again rather than keep a body without it (and queues it again if that job was lost).
    if graph["layout"]["state"] != "missing":
        response["ETag"] = etag
    return response


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


# A page of a stage's nodes: as many as a run's whole to-do tree shows unfolded.
STAGE_NODES_PER_PAGE = 300


@login_required
def run_stage_nodes(request: HttpRequest, run_id, org_node: str) -> HttpResponse:
    """The nodes one stage of a run planned, a page at a time: where a run folded by stage on its task's
    page (graphs.reads.todo_tree.FOLD_ABOVE_NODES) lists them."""
    run, role = run_for_member(request.user, run_id)
    stage = run_stage(run, org_node)
    if stage is None:
        raise Http404("no such stage")
    page = Paginator(stage.nodes, STAGE_NODES_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "console/run_stage.html", {
        "run": run, "task": run.task, "stage": stage, "progress": stage.progress(), "page": page,
        "can_fork": can(role, "fork_run"),
    })


def _planning_call_view(call: dict[str, Any]) -> dict[str, Any]:
    return {
        **call,
        "manifest_json": pretty_json(call["manifest"]) if call["manifest"] else "",
        "extracted_json": pretty_json(call["extracted_manifest"]) if call["extracted_manifest"] else "",
        "notes": call["normalization_notes"],
        "errors": call["validation_errors"],
    }
