"""Runs whose change waits for a reviewer, for the change review tests: a project that requires change
review, a build node that writes a file and a check node after it."""

from __future__ import annotations

from graphs.collaboration.change_reviews import change_review_submit
from graphs.engine import run_start
from graphs.models import ChangeReview, WorkGraphRun, WorkNodeExecution
from tests.repos import writes
from tests.run_builders import edges_for, latest, node, planned_run

# What the build node writes: a file of six lines, so a comment has lines around it.
FEATURE = "def export():\n    rows = load()\n    return ','.join(rows)\n\n\nEXPORTED = True\n"


def review_required(project) -> None:
    """The project holds every attempt's change for a reviewer."""
    project.require_change_review = True
    project.save(update_fields=["require_change_review"])


def build_then_check(task, scripted_runner, executor, *, text: str = FEATURE) -> WorkGraphRun:
    """A run of build (writes src/export.py) → check, started and drained: with change review required, the
    build's change then waits for a reviewer."""
    scripted_runner.replies.setdefault(("node", "build"), writes("src/export.py", text))
    nodes = [node("build"), node("check", "build")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    executor.drain()
    return run


def waiting_build(run: WorkGraphRun) -> WorkNodeExecution:
    execution = latest(run)["build"]
    assert execution.status == "awaiting_review", execution.status
    return execution


def review(execution: WorkNodeExecution, user, decision: str, body: str = "", **fields) -> ChangeReview:
    """``user``'s review of ``execution``, checked and carried out as the API would."""
    execution = WorkNodeExecution.objects.select_related("run__task__project").get(pk=execution.pk)
    return change_review_submit(execution=execution, author=user, decision=decision, body=body, **fields)
