"""An ended run of an experiment scored, and the job and listener that do it when the run ends.

An item passes when its run succeeded and every check of its case passed on the run's final tree (the run
branch's head), each check run as a command judgment runs its command: in the sandbox, with the commands'
environment, the project's network setting and the command timeout. Its cost and tokens are every call of
the run (planning and judges too), its time the run's wall time, its loop-backs and retries its attempts
of those causes.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from graphs.executors import job_handlers_install, job_submit
from graphs.experiments.launch import experiment_advance
from graphs.logs.events import RunEvent, run_event_listener_register
from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.models.experiments import ExperimentItem
from graphs.runs.accounting import spend_of
from graphs.workspaces.command_process import command_run
from graphs.workspaces.sandbox import process_env
from graphs.workspaces.worktrees import run_head_checkout

ITEM_SCORE_JOB = "experiment_item_score"
# A check's output kept on its item: enough to see why it failed.
CHECK_OUTPUT_MAX_BYTES = 4096
Cause = WorkNodeExecution.Cause
LOOP_BACK_CAUSES = (Cause.LOOP_BACK, Cause.DYNAMIC_LOOP_BACK)
RETRY_CAUSES = (Cause.RETRY_SELF, Cause.TRANSIENT_RETRY)


def experiments_install() -> None:
    """Have this process score the runs of experiments as they end (``GraphsConfig.ready``)."""
    job_handlers_install({ITEM_SCORE_JOB: item_score_job})
    run_event_listener_register(run_ended_score)


def run_ended_score(event: RunEvent) -> None:
    """Run event listener: a run of an experiment that ended gets its item scored by a job."""
    if event.get("event") != "run_status" or event.get("status") not in WorkGraphRun.FINISHED_STATUSES:
        return
    item_id = ExperimentItem.objects.filter(run_id=event["run_id"], status=ExperimentItem.Status.RUNNING) \
        .values_list("pk", flat=True).first()
    if item_id is not None:
        job_submit(ITEM_SCORE_JOB, str(item_id))


def item_score_job(item_id: str) -> None:
    """Score the item if its run has ended and it is not scored yet, then move its experiment on."""
    item = ExperimentItem.objects.select_related("run__task__project", "case").filter(
        pk=item_id, status=ExperimentItem.Status.RUNNING).first()
    if item is None or item.run is None or not item.run.is_finished():
        return
    score = item_score(item)
    # A second job for the same run finds it scored and changes nothing.
    ExperimentItem.objects.filter(pk=item.pk, status=ExperimentItem.Status.RUNNING).update(
        status=ExperimentItem.Status.SCORED, scored_at=timezone.now(), **score)
    experiment_advance(item.experiment_id)


def item_score(item: ExperimentItem) -> dict[str, Any]:
    """The score of ``item``'s ended run, as the item stores it."""
    run = item.run
    executions = WorkNodeExecution.objects.filter(run=run)
    spend = spend_of(executions)
    causes = executions.aggregate(loop_backs=Count("pk", filter=Q(cause__in=LOOP_BACK_CAUSES)),
                                  retries=Count("pk", filter=Q(cause__in=RETRY_CAUSES)))
    succeeded = run.status == WorkGraphRun.Status.SUCCEEDED
    checks = _checks_run(run, item.case.checks) if succeeded and item.case.checks else []
    started = run.started_at or run.created_at
    return {
        "passed": succeeded and all(check["passed"] for check in checks), "checks": checks,
        "cost_usd": spend.cost_usd or 0, "input_tokens": spend.usage.get("input_tokens", 0),
        "output_tokens": spend.usage.get("output_tokens", 0),
        "duration_ms": round((run.finished_at - started).total_seconds() * 1000) if run.finished_at else None,
        **causes,
    }


def _checks_run(run: WorkGraphRun, checks: list[list[str]]) -> list[dict[str, Any]]:
    project = run.task.project
    results = []
    with run_head_checkout(run, name="experiment-checks") as tree:
        for argv in checks:
            if tree is None:
                results.append({"argv": argv, "passed": False, "exit_code": None,
                                "output": "The project's folder is no git repository: there is no final tree."})
                continue
            result = command_run(
                argv, cwd=tree, timeout=settings.WORKGRAPH_COMMAND_TIMEOUT,
                env=process_env(settings.WORKGRAPH_COMMAND_ENV), network=project.allow_command_network,
                output_max_bytes=CHECK_OUTPUT_MAX_BYTES, on_output=lambda stream, text: None,
            )
            results.append({"argv": argv, "passed": result.exit_code == 0, "exit_code": result.exit_code,
                            "timed_out": result.timed_out, "output": result.start_error or result.output})
    return results
