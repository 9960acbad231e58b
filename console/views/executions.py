"""An attempt's page (its trace, log, judgment, failure and change) and the JSON the run graph's side
panel shows for it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render

from console.permissions import execution_for_member
from console.views.common import diff_shown, pretty_json
from graphs.domain.attempt_words import attempt_cause_text, attempt_tool_failures
from graphs.domain.judgment_words import failure_reading, judgment_reading
from graphs.logs.lines import log_line_summary
from graphs.logs.store import log_read
from graphs.models import AttemptChange, ExecutionLogFile
from graphs.reads.executions import execution_detail as execution_detail_read
from graphs.reads.node_trace import attempt_trace_header
from graphs.workspaces.worktrees import repository_of

LOG_LINES_ON_PAGE = 2000


@login_required
def execution_detail(request: HttpRequest, node_exec_id) -> HttpResponse:
    execution, _ = execution_for_member(request.user, node_exec_id)
    if execution.is_planning:
        return redirect(f"/runs/{execution.run_id}/planning/#call-{execution.pk}")
    attempts = list(execution.run.executions.filter(node_id=execution.node_id).order_by("attempt"))
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
            "latest_attempt": attempts[-1].attempt if attempts else execution.attempt,
            "log_file": log_file,
            "lines": [(line, log_line_summary(line)) for line in lines],
            "trace_lines": lines,
            "trace_header": attempt_trace_header(execution=execution),
            "cause_text": attempt_cause_text(execution.cause, execution.cause_node_id),
            "last_seq": lines[-1]["seq"] if lines else 0,
            # Lines may still come: the log is being written (or not begun), or it is longer than a page.
            "follow": log_file is None or log_file.status == ExecutionLogFile.Status.OPEN
            or len(lines) >= LOG_LINES_ON_PAGE,
            "input_json": pretty_json(execution.input_payload),
            "judgment_json": pretty_json(execution.judgment_result) if execution.judgment_result else "",
            "judgment": judgment_reading(execution.judgment_result),
            "failure": failure_reading(execution.failure),
            "tool_failures": attempt_tool_failures(count=execution.tool_failures, first=execution.tool_failure_first),
            "change": change,
            "diff_shown": diff_shown(change),
            "isolated": change is not None or repository_of(execution.run.task.project.target_folder) is not None,
        },
    )


@login_required
def execution_json(request: HttpRequest, node_exec_id) -> JsonResponse:
    """What the run graph's side panel shows for one attempt: prompt, output, judgment, every attempt."""
    execution, _ = execution_for_member(request.user, node_exec_id)
    return JsonResponse(execution_detail_read(execution))
