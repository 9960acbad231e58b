"""What a failed attempt leads to: its node's ``on_fail`` action (graphs.domain.on_fail_actions), a transient
retry with backoff, or nothing more (commands its project does not allow).

An action decides what to rerun; ``_Failure`` is what it is given, the failure and the means to act on
the run. The failure is recorded and its follow-up attempts are created under the run lock, in one
transaction, so no scheduler ever sees the failure without them (it would block the dependants that
should wait for the rerun).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from graphs.agents import AgentError
from graphs.domain.failures import FailureClassification
from graphs.domain.judgments import Judgment
from graphs.domain.on_fail_actions import DEFAULT_ON_FAIL_ACTION, on_fail_action
from graphs.domain.retries import transient_backoff_seconds, transient_retry_allowed, transient_retry_refusal
from graphs.domain.storable import storable
from graphs.engine.record import attempt_finish, attempt_next_create, transient_retries_used
from graphs.engine.state import Cause, Status, manifest_node, run_locked, subagent_by_node
from graphs.logs.store import log_append
from graphs.models import Skill, WorkGraphRun, WorkNodeExecution
from graphs.workspaces.disk import DISK_FULL, disk_full_reason
from graphs.workspaces.git import WorkspaceError

DEFAULT_MAX_ATTEMPTS = 3
VERDICT_FEEDBACK_CHARS = 4000


@dataclass(frozen=True)
class _Failure:
    """A failed attempt as its node's on_fail action sees it (graphs.domain.on_fail_actions.FailedAttempt), under
    the run lock."""

    run: WorkGraphRun
    execution: WorkNodeExecution
    action: str
    issues: list[str]
    content: str
    reads_verdict: bool

    @property
    def node_id(self) -> str:
        return self.execution.node_id

    @property
    def manifest(self) -> Mapping[str, Any]:
        return self.run.graph_manifest

    @property
    def findings(self) -> list[str]:
        """What the rerun attempts are told: the judge's issues and, when the judgment read a verdict,
        the verdict's own words (the issue alone says only that it was not pass)."""
        if not self.reads_verdict:
            return self.issues
        return [*self.issues, f"the verdict reads:\n{self.content[:VERDICT_FEEDBACK_CHARS]}"]

    def attempts_add(
        self, node_ids: Sequence[str], *, cause: str, feedback: list[str], cause_node_id: str = ""
    ) -> None:
        for node_id in node_ids:
            attempt_next_create(self.run, node_id, cause=cause, cause_node_id=cause_node_id, feedback=feedback)

    def log(self, outcome: str, **fields: Any) -> None:
        log_append(execution=self.execution, event="on_fail", action=self.action, outcome=outcome, **fields)

    def org_nodes(self) -> dict[str, str]:
        return subagent_by_node(self.run)

    def skills_flag(self, skill_ids: set[str], *, note: str) -> None:
        Skill.objects.filter(skill_id__in=skill_ids).update(defect_reported_at=timezone.now(), defect_note=note[:4000])


def attempt_judgment_failed(
    execution: WorkNodeExecution, *, worker: str, node: dict, judgment: Judgment, output: dict,
    failure: FailureClassification | None = None, error: str = "",
) -> None:
    """Record the failed judgment (classified by ``failure``, else by the rules) and have the node's
    ``on_fail`` action respond, or leave the failure terminal once its attempts are used up (at once for
    an action that does not respond, hard_fail). ``error`` replaces the default "judgment failed:
    <issues>" when the failure has a reason of its own (an external node's timeout)."""
    on_fail = node.get("on_fail") or {}
    name = on_fail.get("action", DEFAULT_ON_FAIL_ACTION)
    action = on_fail_action(name)
    max_attempts = int(on_fail.get("max_attempts") or DEFAULT_MAX_ATTEMPTS)
    with run_locked(execution.run_id) as run:
        error = error or "judgment failed: " + "; ".join(judgment.issues)
        if not attempt_finish(execution, worker=worker, status=Status.FAILED, output=output, judgment=judgment,
                              error=error, failure=failure):
            return
        # A change a reviewer sent back is no failure of the node's: it counts for nothing here.
        attempts = run.executions.filter(node_id=execution.node_id).exclude(cause=Cause.TRANSIENT_RETRY).exclude(
            status=Status.CHANGES_REQUESTED).count()
        if action is None or action.respond is None or attempts >= max_attempts:
            terminal = action is not None and action.respond is None
            reason = name if terminal else f"{name} exhausted after {attempts} attempts"
            log_append(execution=execution, event="on_fail", action=name, outcome="terminal", reason=reason)
            return
        action.respond(_Failure(run=run, execution=execution, action=name,
                                issues=judgment.issues or ["the judge gave no details"], content=output["text"],
                                reads_verdict=action.reads_verdict or _judgment_reads_verdict(node)))


def _judgment_reads_verdict(node: dict) -> bool:
    judgment = node.get("judgment") or {}
    return judgment.get("kind") == "mechanical" and judgment.get("check_ref") == "verdict_says_pass"


def attempt_commands_refused(execution: WorkNodeExecution, *, worker: str, reason: str) -> None:
    """Record an attempt whose commands its project does not allow, as failed with kind
    ``commands_disabled``. Its on_fail is not applied: no retry or loop-back can allow them, a person can."""
    log_append(execution=execution, event="commands_disabled", reason=reason)
    attempt_finish(execution, worker=worker, status=Status.FAILED, output={"text": "", "usage": None},
                   judgment=Judgment(ok=False, kind="commands_disabled", issues=[reason]),
                   error=f"commands_disabled: {reason}")


def attempt_agent_failed(
    execution: WorkNodeExecution, *, worker: str, error: AgentError, failure: FailureClassification | None = None
) -> None:
    """Record an agent error (classified by ``failure``, else by the rules); a transient one (timeout,
    rate limit, outage) is retried after a backoff."""
    log_append(execution=execution, event="agent_error", kind=error.kind, transient=error.transient,
               message=_agent_error_detail(error))
    with run_locked(execution.run_id) as run:
        if not attempt_finish(execution, worker=worker, status=Status.FAILED, error=agent_error_text(error),
                              agent_error_kind=error.kind, failure=failure):
            return
        if error.transient:
            transient_retry_create(run, execution, backoff=True, kind=error.kind)


def attempt_workspace_failed(execution: WorkNodeExecution, *, worker: str, error: WorkspaceError) -> None:
    """Record an attempt whose worktree, commit or landing failed; one that met a full disk is retried after
    a backoff, as an outage is: the disk is the machine's trouble, not the node's, and space comes back."""
    _attempt_failed(execution, worker=worker, error=error, text=f"workspace error: {error}")


def attempt_crashed(execution: WorkNodeExecution, *, worker: str, error: Exception) -> None:
    """Record an attempt a bug or an unforeseen error ended (``internal error``); retried after a backoff
    only when the disk was full, which is what git and libgit2 fail on in ways of their own."""
    _attempt_failed(execution, worker=worker, error=error, text=f"internal error: {error!r}")


def _attempt_failed(execution: WorkNodeExecution, *, worker: str, error: Exception, text: str) -> None:
    # Read before the failure is recorded: space may be freed as soon as someone sees it. The reason goes
    # on the error, so a node whose retries run out on a full disk fails naming it.
    full = disk_full_reason(error, (settings.WORKGRAPH_WORKSPACE_DIR, execution.run.task.project.target_folder))
    if full and DISK_FULL not in text:
        text = f"{text}; {full}"
    with run_locked(execution.run_id) as run:
        if not attempt_finish(execution, worker=worker, status=Status.FAILED, error=text):
            return
        if full:
            transient_retry_create(run, execution, backoff=True, kind="disk_full")


def agent_error_text(error: AgentError) -> str:
    """The error an attempt ended by an agent error records: its kind, message and stderr's start."""
    return f"agent error ({error.kind}): {_agent_error_detail(error)}"


def _agent_error_detail(error: AgentError) -> str:
    detail = str(error)
    if error.stderr:
        detail += f" | stderr: {error.stderr.strip()[:2000]}"
    return detail


def transient_retry_create(run: WorkGraphRun, execution: WorkNodeExecution, *, backoff: bool,
                           kind: str | None = None) -> bool:
    """Add a ``transient_retry`` attempt of the execution's node if its node and budget allow (call under
    the run lock); ``backoff`` delays it by the node's backoff. Return whether one was added.

    ``kind`` is the agent error's kind, None for an attempt whose worker was lost. The budget and the
    delays are the node's ``retry_policy`` where it has one, else the console's. Every transient retry
    counts against the node's budget, so a node that kills every worker it runs on, or whose agent is
    never reachable, ends failed instead of looping. A node that must not be retried gets the reason
    on its attempt's error and log.
    """
    node = manifest_node(run.graph_manifest, execution.node_id) or {}
    refusal = transient_retry_refusal(node=node, kind=kind)
    if refusal is not None:
        log_append(execution=execution, event="transient_retry_skipped", kind=kind, reason=refusal)
        error = f"{execution.error}; {refusal}" if execution.error else refusal
        WorkNodeExecution.objects.filter(pk=execution.pk).update(error=storable(error))
        execution.error = error
        return False
    policy = node.get("retry_policy")
    used = transient_retries_used(run, execution.node_id)
    if not transient_retry_allowed(retries_used=used, policy=policy):
        log_append(execution=execution, event="transient_retry_skipped", kind=kind,
                   reason=f"the node's {used} transient retries are used up")
        return False
    attempt_next_create(
        run, execution.node_id, cause=Cause.TRANSIENT_RETRY,
        not_before_seconds=transient_backoff_seconds(retries_used=used, policy=policy) if backoff else 0.0,
        feedback=list(execution.input_payload.get("feedback", [])),
    )
    return True
