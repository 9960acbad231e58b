"""Pages that set two of a kind side by side: two attempts of a node, two runs of a task."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from console.permissions import execution_for_member, run_for_member
from graphs.domain.attempt_words import attempt_cause_text
from graphs.reads.comparisons import attempt_pair_problem, attempts_comparison, run_pair_problem, runs_comparison
from graphs.reads.node_trace import attempt_trace_header


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
