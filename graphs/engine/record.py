"""Writing an attempt's end, the next attempt of a node, and the artifact an accepted output promotes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from graphs.domain.failures import FailureClassification, FailureFacts, failure_classify
from graphs.domain.judgments import Judgment, judgment_kind
from graphs.domain.storable import storable
from graphs.engine.state import Cause, Status, manifest_node, skill_pk, subagent_by_node
from graphs.engine.statements import row_update
from graphs.logs.events import node_states_emit
from graphs.logs.store import log_append
from graphs.metrics.counters import node_duration_observe
from graphs.models import Artifact, WorkGraphRun, WorkNodeExecution
from graphs.runs.accounting import accounting_of, run_cost_write
from graphs.runs.evidence import node_evidence_gaps
from graphs.runs.facts import node_latest_attempt


def attempt_finish(
    execution: WorkNodeExecution,
    *,
    worker: str,
    status: str,
    output: dict | None = None,
    judgment: Judgment | None = None,
    error: str = "",
    agent_error_kind: str = "",
    failure: FailureClassification | None = None,
) -> bool:
    """Record the end of an attempt (and its input, see ``attempt_input_keep``) if this worker still
    owns it; return whether it did. A worker presumed dead and replaced cannot commit a second result.

    A failed attempt is classified in the same UPDATE: by ``failure`` when the caller classified it
    already (the judge agent may have been asked), else by the deterministic rules over ``error``,
    ``agent_error_kind``, the judgment and the output.
    """
    fields: dict[str, Any] = {
        "status": status, "finished_at": timezone.now(), "error": storable(error),
        "input_payload": storable(execution.input_payload), **accounting_of(execution),
        # The agent profile revision its call ran with (graphs.profiles.resolve.attempt_profile).
        "profile_revision_id": execution.profile_revision_id,
    }
    if output is not None:
        fields["output_payload"] = storable(output)
    if judgment is not None:
        fields["judgment_result"] = storable(judgment.as_dict())
    if status == Status.FAILED:
        if failure is None:
            failure = failure_classify(attempt_failure_facts(
                error=error, agent_error_kind=agent_error_kind, judgment=judgment, output=output))
        fields["failure"] = failure.as_dict()
    owned = row_update(WorkNodeExecution, pk=execution.pk, where={"status": Status.RUNNING, "worker": worker},
                       values=fields)
    for name, value in fields.items():
        setattr(execution, name, value)
    if owned == 1:
        run_cost_write(execution)
        node_states_emit(run_id=execution.run_id, rows=[execution])
        # An attempt awaiting review has not ended: its duration is observed once a reviewer decides.
        if execution.started_at is not None and status in WorkNodeExecution.FINISHED_STATUSES:
            node_duration_observe(org_node=execution.subagent_type, status=status,
                                  seconds=(execution.finished_at - execution.started_at).total_seconds())
    log_append(execution=execution, event="node_finished", status=status, error=error, committed=owned == 1)
    return owned == 1


def attempt_failure_facts(
    *, error: str, agent_error_kind: str = "", judgment: Judgment | None = None, output: dict | None = None
) -> FailureFacts:
    """What the classification rules read of a failed attempt."""
    return FailureFacts(error=error, agent_error_kind=agent_error_kind,
                        judgment=judgment.as_dict() if judgment is not None else None,
                        output=str((output or {}).get("text") or ""))


def attempt_input_keep(
    execution: WorkNodeExecution, *, node: dict, prompt: str, upstream: dict[str, str], feedback: list[str]
) -> None:
    """Keep the attempt's input on it; ``attempt_finish`` writes it with the result, one UPDATE fewer.

    A slow judgment (``JudgmentKind.slow``: another agent call, a program) may take minutes: the input is
    written before it, so the node's page shows the prompt meanwhile.
    """
    payload = {**execution.input_payload, "prompt": prompt, "upstream": sorted(upstream), "feedback": feedback}
    execution.input_payload = payload
    kind = judgment_kind((node.get("judgment") or {}).get("kind"))
    if kind is not None and kind.slow:
        WorkNodeExecution.objects.filter(pk=execution.pk).update(input_payload=payload)


# Records how an attempt ended; returns the status it wrote, or None when the worker no longer owned it.
Recorder = Callable[[], str | None]


def attempt_passed_recorder(
    execution: WorkNodeExecution, *, worker: str, node: dict, output: dict, judgment: Judgment
) -> Recorder:
    """How an output that passed its judgment ends the attempt — succeeded and promoted, or partial when
    the evidence the node's spec requires is missing — as a function that records it.

    The outcome is worked out here, outside any transaction; the function only writes, so the caller
    can record it in the transaction that advances the run.
    """
    text = output["text"]
    gaps = node_evidence_gaps(node=node, output=text, execution=execution)
    if gaps:
        gated = Judgment(ok=judgment.ok, kind=judgment.kind, issues=judgment.issues,
                         detail={**judgment.detail, "evidence_gaps": gaps})

        def record_partial() -> str | None:
            owned = attempt_finish(execution, worker=worker, status=Status.PARTIAL, output=output, judgment=gated,
                                   error="incomplete: " + "; ".join(gaps))
            return Status.PARTIAL if owned else None

        return record_partial

    def record_succeeded() -> str | None:
        if not attempt_finish(execution, worker=worker, status=Status.SUCCEEDED, output=output, judgment=judgment):
            return None
        _artifact_promote(execution, node=node, content=text)
        return Status.SUCCEEDED

    return record_succeeded


def _artifact_promote(execution: WorkNodeExecution, *, node: dict, content: str) -> None:
    promote = node.get("promotes_to_artifact") or {}
    if not promote.get("artifact_type"):
        return
    # A node that ran again (a loop-back) replaces its earlier artifact: the task keeps the accepted version.
    with transaction.atomic():
        Artifact.objects.filter(
            run_id=execution.run_id, node_exec__node_id=execution.node_id, artifact_type=promote["artifact_type"]
        ).delete()
        Artifact.objects.create(
            node_exec=execution, artifact_type=promote["artifact_type"], task_id=execution.run.task_id,
            run_id=execution.run_id, content=content,
        )


def attempt_next_create(
    run: WorkGraphRun,
    node_id: str,
    *,
    cause: str,
    cause_node_id: str = "",
    feedback: list[str] | None = None,
    not_before_seconds: float = 0.0,
    review: dict[str, Any] | None = None,
) -> WorkNodeExecution:
    """Add the next attempt of ``node_id`` as a pending row (call under the run lock).

    ``review`` is the change review it is to amend (graphs.engine.change_review); a retry of an attempt
    that amended one (``retry_self``, ``transient_retry``) amends it too, from the same reviewed change.
    """
    previous = node_latest_attempt(run=run, node_id=node_id)
    node = manifest_node(run.graph_manifest, node_id) or {}
    if review is None and previous is not None and cause in _RETRIES:
        review = (previous.input_payload or {}).get("review")
    created = WorkNodeExecution.objects.create(
        run=run,
        node_id=node_id,
        subagent_type=previous.subagent_type if previous else subagent_by_node(run).get(node_id, ""),
        skill_ref_id=skill_pk(node),
        attempt=(previous.attempt if previous else 0) + 1,
        cause=cause,
        cause_node_id=cause_node_id,
        input_payload={"feedback": feedback or [], **({"review": review} if review else {})},
        not_before=timezone.now() + timedelta(seconds=not_before_seconds) if not_before_seconds else None,
    )
    node_states_emit(run_id=run.pk, rows=[created])
    return created


# The causes of an attempt that does again what the one before it was asked to do.
_RETRIES = frozenset({Cause.RETRY_SELF, Cause.TRANSIENT_RETRY})


def transient_retries_used(run: WorkGraphRun, node_id: str) -> int:
    return run.executions.filter(node_id=node_id, cause=Cause.TRANSIENT_RETRY).count()
