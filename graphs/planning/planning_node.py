"""The planning node: the synthetic ``WorkNodeExecution`` a planning call is recorded as, and how it ended.

``planning_execution_create`` opens it (``__planning__`` or ``__planning__:<org_node>``) with its own
JSONL log when the call starts; ``planning_success_record`` or ``planning_failure_record`` closes it
with what the call learned (``PlanningAttempt``): the prompt, the raw responses, the extracted
manifest, the normalization notes and any validation errors, so a reviewer can open it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from graphs.domain.failures import FailureFacts, failure_classify
from graphs.domain.storable import storable
from graphs.errors import WorkGraphError
from graphs.logs.events import node_states_emit
from graphs.logs.store import log_append, log_file_close, log_file_open
from graphs.models import WorkGraphRun, WorkNodeExecution, planning_node_id
from graphs.runs.accounting import ACCOUNTING_FIELDS, run_cost_write
from graphs.runs.heartbeat import worker_name
from graphs.runs.status import run_status_set, run_stopped_finish


class PlanningFailedError(WorkGraphError):
    """A planning call that produced no usable manifest; the reason is also on its planning node."""

    def __init__(
        self, reason: str, *, planning_execution: WorkNodeExecution | None = None, cancelled: bool = False,
        code: str = "", agent_error_kind: str = "",
    ) -> None:
        reason = storable(reason)  # it may quote the agent's output, and it is stored on the run
        super().__init__(reason)
        self.reason = reason
        self.planning_execution = planning_execution
        # The run was cancelled while the call planned: the call stopped, it did not fail.
        self.cancelled = cancelled
        # What failed, for the failure rules (graphs.domain.failures): ``agent_failed`` (with the agent error's
        # kind) or ``manifest_unusable``; empty for the rest.
        self.code = code
        self.agent_error_kind = agent_error_kind


@dataclass
class PlanningAttempt:
    """What one planning call learned, kept on the planning node whatever the outcome."""

    prompt: str
    raw_responses: list[str] = field(default_factory=list)
    extracted: dict | None = None
    manifest: dict | None = None
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    repair_prompt: str | None = None
    usage: list[dict] = field(default_factory=list)
    # The accounting of each agent call (the first, then a repair): usage, cost, turns, model, …
    agent_calls: list[dict] = field(default_factory=list)
    # The adaptation report of a template-guided plan (None when no template guided it).
    adaptation: dict | None = None
    # What a gap-driven round answered: round, has_gap, gap_detail, task_ids (None in graph mode).
    gap: dict | None = None


def planning_execution_create(
    *, run: WorkGraphRun, org_node: str, prompt: str, append: bool, skill_pk: int | None = None
) -> WorkNodeExecution:
    node_id = planning_node_id(org_node if append else None)
    now = timezone.now()
    # The same org node may plan into a run more than once (a dynamic loop-back re-plans a stage):
    # each call is its own attempt, numbered under the (run, node_id, attempt) unique constraint.
    for _ in range(5):
        attempt_number = WorkNodeExecution.objects.filter(run=run, node_id=node_id).count() + 1
        if attempt_number > 1 and not append:
            # A run is planned fresh once: this is a duplicate of its plan job (a redelivery, or the
            # reaper handing a slow one out again), and the first call records the plan.
            raise PlanningFailedError(f"run {run.run_id} is already being planned")
        try:
            with transaction.atomic():
                execution = WorkNodeExecution.objects.create(
                    run=run,
                    node_id=node_id,
                    subagent_type=org_node,
                    skill_ref_id=skill_pk,
                    attempt=attempt_number,
                    cause=WorkNodeExecution.Cause.PLANNING,
                    status=WorkNodeExecution.Status.RUNNING,
                    input_payload={"org_node": org_node, "prompt": prompt, "append": append},
                    ready_at=now,
                    started_at=now,
                    heartbeat_at=now,
                    worker=worker_name(),
                )
            break
        except IntegrityError:
            continue
    else:
        raise PlanningFailedError(f"could not record the planning call {node_id} for run {run.run_id}")
    log_file_open(execution=execution)
    log_append(execution=execution, event="node_start", node_id=node_id, org_node=org_node, append=append)
    node_states_emit(run_id=run.pk, rows=[execution])
    return execution


def planning_success_record(*, execution: WorkNodeExecution, attempt: PlanningAttempt, new_node_ids: list[str]) -> None:
    """Record that a planning call ended with a manifest, adding ``new_node_ids`` to its run."""
    execution.status = WorkNodeExecution.Status.SUCCEEDED
    execution.output_payload = _output_payload(attempt, new_node_ids=new_node_ids)
    execution.finished_at = timezone.now()
    with transaction.atomic():
        execution.save(update_fields=["status", "output_payload", "finished_at", *ACCOUNTING_FIELDS])
        run_cost_write(execution)
    node_states_emit(run_id=execution.run_id, rows=[execution])
    log_append(execution=execution, event="node_completed", new_node_ids=new_node_ids)
    log_file_close(execution=execution)


def planning_failure_record(
    *, execution: WorkNodeExecution, run: WorkGraphRun, attempt: PlanningAttempt, reason: str, fresh: bool,
    cancelled: bool, code: str = "", agent_error_kind: str = "",
) -> None:
    """Record how a planning call ended without a manifest: failed with ``reason``, or ``cancelled``.
    A run the call was creating ends the same way."""
    reason = storable(reason)
    now = timezone.now()
    execution.status = WorkNodeExecution.Status.CANCELLED if cancelled else WorkNodeExecution.Status.FAILED
    execution.error = reason
    execution.output_payload = _output_payload(attempt, new_node_ids=[])
    execution.finished_at = now
    if not cancelled:
        facts = FailureFacts(error=reason, error_code=code, agent_error_kind=agent_error_kind,
                             output="\n".join(attempt.raw_responses))
        execution.failure = failure_classify(facts).as_dict()
    with transaction.atomic():
        execution.save(update_fields=["status", "error", "output_payload", "finished_at", "failure",
                                      *ACCOUNTING_FIELDS])
        run_cost_write(execution)
    node_states_emit(run_id=run.pk, rows=[execution])
    if fresh:
        if cancelled:
            run_stopped_finish(run, allowed_from=[WorkGraphRun.Status.PLANNING])
        else:
            run_status_set(run=run, status=WorkGraphRun.Status.PLANNING_FAILED, error=reason, finished_at=now,
                           allowed_from=[WorkGraphRun.Status.PLANNING])
        run.refresh_from_db()
    log_append(execution=execution, event="planning_cancelled" if cancelled else "planning_failed", reason=reason,
               errors=attempt.errors)
    log_file_close(execution=execution)


def _output_payload(attempt: PlanningAttempt, *, new_node_ids: list[str]) -> dict[str, Any]:
    return storable({
        "raw_response": attempt.raw_responses[0] if attempt.raw_responses else "",
        "repair_prompt": attempt.repair_prompt,
        "repair_response": attempt.raw_responses[1] if len(attempt.raw_responses) > 1 else None,
        "extracted_manifest": attempt.extracted,
        "manifest": attempt.manifest,
        "normalization_notes": attempt.notes,
        "validation_errors": attempt.errors,
        "new_node_ids": new_node_ids,
        "usage": attempt.usage,
        "agent_calls": attempt.agent_calls,
        # Present only for a template-guided plan.
        **({"adaptation": attempt.adaptation} if attempt.adaptation is not None else {}),
        # Present only for a gap-driven round that gave a usable answer.
        **({"gap": attempt.gap} if attempt.gap is not None else {}),
    })
