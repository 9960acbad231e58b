"""External nodes (``executor: external``): the engine calls no agent, it waits for a report.

An external node's attempt is claimed like any other, its prompt is written on it, and then the
worker lets go of it: the row stays ``running`` under the worker name ``external`` with a
``deadline_at``, and no thread or process holds it while it waits. It ends one of three ways:

- a collaboration report (``graphs.collaboration.reports``) completes it — judged by the node's judgment
  (``node_attempt_finish_external``);
- its deadline passes: it fails with judgment kind ``external_timeout`` and the node's ``on_fail``
  applies. A delayed job fires at the deadline; the reaper checks every waiting attempt on each pass
  too, so a job lost with its broker or process only makes the timeout late, never missing;
- its run is cancelled: ``run_stop`` cancels it with the waiting attempts (there is no agent to stop).

While it waits, each reaper pass renews its heartbeat: the engine has looked and it is legitimately
waiting. The reaper's lost-worker check leaves it alone (a wait has no worker to lose).
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from graphs.agents import get_runner
from graphs.domain.judgments import DEFAULT_JUDGMENT_KIND, Judgment
from graphs.domain.manifest_nodes import is_external_node
from graphs.engine.jobs import external_deadline_submit
from graphs.engine.judgment import AttemptJudgeRequest, judgment_run
from graphs.engine.on_fail import attempt_judgment_failed
from graphs.engine.record import attempt_passed_recorder
from graphs.engine.scheduler import run_advance
from graphs.engine.state import Status, manifest_node
from graphs.logs.store import log_append, log_file_close
from graphs.models import EXTERNAL_WORKER, WorkNodeExecution
from graphs.notifications import EXTERNAL_WAITING, notify


def external_deadline_seconds(node: dict) -> int:
    """How long an attempt of ``node`` waits for its report: its ``deadline_seconds``, else the setting."""
    return int(node.get("deadline_seconds") or settings.WORKGRAPH_EXTERNAL_DEADLINE_SECONDS)


def attempt_external_wait(execution: WorkNodeExecution, *, node: dict, worker: str, input_payload: dict) -> bool:
    """Hand a claimed attempt of an external node over to the outside: it waits, running, with no worker,
    until a report or its deadline. Return whether this worker still held it (else it ended meanwhile)."""
    now = timezone.now()
    seconds = external_deadline_seconds(node)
    deadline = now + timedelta(seconds=seconds)
    handed = WorkNodeExecution.objects.filter(pk=execution.pk, status=Status.RUNNING, worker=worker).update(
        worker=EXTERNAL_WORKER, deadline_at=deadline, heartbeat_at=now, input_payload=input_payload
    )
    if handed != 1:
        return False
    execution.worker, execution.deadline_at, execution.input_payload = EXTERNAL_WORKER, deadline, input_payload
    log_append(execution=execution, event="external_wait", deadline_at=deadline.isoformat(),
               deadline_seconds=seconds)
    external_deadline_submit(node_exec_id=execution.pk, delay=seconds)
    notify(EXTERNAL_WAITING, run=execution.run_id, node_id=execution.node_id, node_exec_id=str(execution.pk),
           deadline_at=deadline.isoformat())
    return True


def external_deadline_job(node_exec_id: str) -> None:
    """Fail the attempt if it is still waiting for its report past its deadline; a job that fires early
    (a broker's clock) waits again for the rest."""
    execution = _waiting(WorkNodeExecution.objects.filter(pk=node_exec_id)).first()
    if execution is None:
        return  # reported, cancelled or already timed out: nothing to do
    remaining = (execution.deadline_at - timezone.now()).total_seconds()
    if remaining > 0:
        external_deadline_submit(node_exec_id=execution.pk, delay=remaining)
        return
    _attempt_time_out(execution)


def external_waits_check(*, now: Any = None) -> list[str]:
    """For the reaper: fail every attempt waiting past its deadline, renew the heartbeat of the others,
    and return the ids of those that timed out."""
    now = now or timezone.now()
    waiting = _waiting(WorkNodeExecution.objects.all())
    overdue = list(waiting.filter(deadline_at__lte=now))
    for execution in overdue:
        _attempt_time_out(execution)
    waiting.filter(deadline_at__gt=now).update(heartbeat_at=now)
    return [str(execution.pk) for execution in overdue]


def _waiting(rows) -> Any:
    return rows.filter(status=Status.RUNNING, worker=EXTERNAL_WORKER, deadline_at__isnull=False).select_related(
        "run__task__project"
    )


def _attempt_time_out(execution: WorkNodeExecution) -> None:
    node = manifest_node(execution.run.graph_manifest, execution.node_id) or {}
    seconds = external_deadline_seconds(node)
    reason = (f"no report came within {seconds} s of the attempt being handed out"
              f" (deadline {execution.deadline_at:%Y-%m-%d %H:%M:%S} UTC)")
    log_append(execution=execution, event="external_timeout", deadline_at=execution.deadline_at.isoformat(),
               deadline_seconds=seconds)
    attempt_judgment_failed(
        execution, worker=EXTERNAL_WORKER, node=node,
        judgment=Judgment(ok=False, kind="external_timeout", issues=[reason]),
        output={"text": "", "usage": None}, error=f"external_timeout: {reason}",
    )
    log_file_close(execution=execution)
    run_advance(run_id=execution.run_id)


def node_attempt_finish_external(
    *, execution: WorkNodeExecution, worker: str, text: str, ok: bool, issues: list[str], extra: dict | None = None
) -> None:
    """Record a result produced outside the workers (a collaboration callback) for an attempt it claimed.

    A success is recorded like an agent's judged output — an external node's is judged by the node's
    own judgment first (of a kind that calls no agent and runs no program: quick enough for the report's
    request); a failure goes through the node's on_fail, with the reported gaps as the judge's issues, so
    loop-backs and retries work the same way.
    """
    node = manifest_node(execution.run.graph_manifest, execution.node_id) or {}
    output = {"text": text, "usage": None, **(extra or {})}
    log_append(execution=execution, event="result_reported", ok=ok, issues=issues, worker=worker)
    judgment = Judgment(ok=ok, kind="report", issues=issues)
    judged = (node.get("judgment") or {}).get("kind", DEFAULT_JUDGMENT_KIND) != DEFAULT_JUDGMENT_KIND
    if ok and is_external_node(node) and judged:
        judgment = judgment_run(AttemptJudgeRequest(
            runner=get_runner(execution.run.runner_name()), execution=execution, node=node, content=text,
            cancel_event=threading.Event(),
            cwd=Path(execution.run.task.project.target_folder)))
    if judgment.ok:
        attempt_passed_recorder(execution, worker=worker, node=node, output=output, judgment=judgment)()
    else:
        attempt_judgment_failed(execution, worker=worker, node=node, judgment=judgment, output=output)
    log_file_close(execution=execution)
    run_advance(run_id=execution.run_id)
