"""Files to download: a run's and an attempt's change as a patch, an attempt's log as JSONL, and the
DAG spec a run was imported from."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header

from console.permissions import execution_for_member, run_for_member
from graphs.logs.store import log_texts
from graphs.models import AttemptChange, ExecutionLogFile, RunWorkspace, WorkGraphRun
from graphs.planning.dag_specs import dag_spec_download, run_dag_spec
from graphs.workspaces.worktrees import change_diff


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


def _patch_response(patch: bytes, *, filename: str) -> HttpResponse:
    # text/plain, never rendered: a diff is agent-written text.
    response = HttpResponse(patch, content_type="text/x-diff; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    response["X-Content-Type-Options"] = "nosniff"
    return response
