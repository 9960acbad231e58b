"""How a stage and a run end, and how a caller waits for that.

A stage is over when no attempt of the run is active and every manifest node has one; it then
continues the pipeline, or the run ends — cancelled, failed or succeeded — and its task follows
(``graphs.runs.status``). A gap-driven run's stages are its planning rounds (``gap:<n>``): each one
over asks the planner again, until it closes the gap or the rounds run out.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from graphs.domain.catalogs import ORG_NODES
from graphs.engine.jobs import gap_round_submit, pipeline_step_submit
from graphs.engine.state import GraphShape, RunStatus, Status, upstream_bad
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun, WorkNodeExecution, planning_node_id
from graphs.notifications import nodes_failed_notify
from graphs.runs.status import UNFINISHED_STATUSES, run_status_set, run_stopped_finish
from graphs.workspaces.disk import DISK_FULL

GAP_STAGE_PREFIX = "gap:"


def gap_stage(round_number: int) -> str:
    """The stage of a gap-driven run while the nodes of planning round ``round_number`` run."""
    return f"{GAP_STAGE_PREFIX}{round_number}"


def gap_stage_round(stage: str) -> int | None:
    """The planning round a gap-driven run's stage names, or None for any other stage."""
    if not stage.startswith(GAP_STAGE_PREFIX):
        return None
    number = stage.removeprefix(GAP_STAGE_PREFIX)
    return int(number) if number.isdigit() else None


def stage_end_check(run: WorkGraphRun, shape: GraphShape, latest: dict[str, dict]) -> None:
    """Finish the stage when no attempt is active any more, nor waiting for a reviewer, and it really is over
    (call under the run lock)."""
    unsettled = WorkNodeExecution.ACTIVE_STATUSES | WorkNodeExecution.WAITING_STATUSES
    done = all(row["status"] not in unsettled for row in latest.values())
    if done and _stage_complete(run, latest, node_count=len(shape.position)):
        _stage_finished(run, shape, latest)


def _stage_complete(run: WorkGraphRun, latest: dict[str, dict], *, node_count: int) -> bool:
    """Whether the current stage is really over, not between a stage's planning call and its first rows.

    An appending stage is over only once its planning call succeeded and every manifest node has an
    attempt (``run_start`` creates them in the same locked transaction that marks the run running).
    """
    if len(latest) < node_count:
        return False
    if not run.pipeline or run.stage == ORG_NODES[0] or gap_stage_round(run.stage) is not None:
        return True
    return run.executions.filter(node_id=planning_node_id(run.stage), status=Status.SUCCEEDED).exists()


def _stage_finished(run: WorkGraphRun, shape: GraphShape, latest: dict[str, dict]) -> None:
    """Every node of the run has ended: continue the pipeline, or finish the run."""
    if run.cancel_requested_at is not None:
        run_stopped_finish(run)
        return
    # upstream_bad also counts a required node that ended partial (its evidence is missing).
    failed = sorted(node_id for node_id, row in latest.items() if upstream_bad(shape.manifest, node_id, row["status"]))
    if failed:
        nodes_failed_notify(run=run, latest=latest)
        run_finish(run, status=RunStatus.FAILED, error=_failed_reason(run, failed, latest))
        return
    round_number = gap_stage_round(run.stage)
    if round_number is not None:
        _gap_round_finished(run, round_number=round_number)
        return
    if pipeline_next_stage(run) is not None:
        pipeline_step_submit(run_id=run.run_id, from_stage=run.stage)
        return
    run_finish(run, status=RunStatus.SUCCEEDED, error="")


def _gap_round_finished(run: WorkGraphRun, *, round_number: int) -> None:
    """Every node of a gap-driven round succeeded: the run succeeds when the round's answer closed the
    gap, else the planner is asked again — unless that was the last round allowed."""
    latest = (run.executions.filter(node_id__startswith=PLANNING_NODE_ID, status=Status.SUCCEEDED)
              .order_by("-created_at").values_list("output_payload", flat=True).first()) or {}
    gap = latest.get("gap") or {}
    if not gap.get("has_gap"):
        run_finish(run, status=RunStatus.SUCCEEDED, error="")
    elif round_number >= settings.WORKGRAPH_GAP_MAX_ROUNDS:
        run_finish(run, status=RunStatus.FAILED,
                   error=f"the gap is still open after {round_number} planning rounds (WORKGRAPH_GAP_MAX_ROUNDS):"
                         f" {gap.get('gap_detail') or 'the planner gave no detail'}")
    else:
        gap_round_submit(run_id=run.run_id, round_number=round_number + 1)


def pipeline_next_stage(run: WorkGraphRun) -> str | None:
    """Return the org node that plans next in a pipeline run, or None when the pipeline is done."""
    if not run.pipeline or run.stage not in ORG_NODES:
        return None
    index = ORG_NODES.index(run.stage)
    return ORG_NODES[index + 1] if index + 1 < len(ORG_NODES) else None


def _failed_reason(run: WorkGraphRun, failed: list[str], latest: dict[str, dict]) -> str:
    """The nodes that did not succeed, and a full disk where one is why some of them failed for good: the
    machine's trouble, not theirs, which the run's reason must name."""
    reason = f"nodes that did not succeed: {', '.join(failed)}"
    full = sorted(run.executions.filter(pk__in=[latest[node_id]["pk"] for node_id in failed],
                                        error__contains=DISK_FULL).values_list("node_id", flat=True))
    return f"{reason}; {DISK_FULL} under {', '.join(full)}" if full else reason


def run_finish(run: WorkGraphRun, *, status: str, error: str) -> bool:
    """End a run that has not ended yet; its task follows. Return whether this call ended it."""
    return run_status_set(run=run, status=status, error=error, allowed_from=UNFINISHED_STATUSES)


def run_wait_finished(*, run_id: Any, timeout: float, poll: float = 0.2) -> WorkGraphRun:
    """Poll until the run has finished or ``timeout`` seconds have passed; return it as it is then."""
    deadline = time.monotonic() + timeout
    # Only the status is polled: the whole row holds the manifest, which a wide graph makes heavy to
    # send and decode several times a second beside the workers running it.
    statuses = WorkGraphRun.objects.filter(pk=run_id).values_list("status", flat=True)
    while statuses.get() not in WorkGraphRun.FINISHED_STATUSES and time.monotonic() < deadline:
        time.sleep(poll)
    return WorkGraphRun.objects.get(pk=run_id)


def task_wait_finished(*, task_id: Any, timeout: float, poll: float = 0.2) -> Task:
    """Poll until the task has an outcome (its latest run ended) or ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    finished = {Task.Status.SUCCEEDED, Task.Status.FAILED, Task.Status.REJECTED, Task.Status.CANCELLED,
                Task.Status.INCOMPLETE}
    while True:
        task = Task.objects.get(pk=task_id)
        if task.status in finished or time.monotonic() >= deadline:
            return task
        time.sleep(poll)
