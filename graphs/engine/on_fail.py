"""What a failed attempt leads to: its node's ``on_fail`` action, a transient retry with backoff, or
nothing more (commands its project does not allow).

Each action is one function of ``_ACTIONS``. The failure is recorded and its follow-up attempts are
created under the run lock, in one transaction, so no scheduler ever sees the failure without them
(it would block the dependants that should wait for the rerun).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils import timezone

from graphs import manifest_graph
from graphs.agents import AgentError
from graphs.checks import first_root_cause
from graphs.engine.judgment import Judgment
from graphs.engine.record import attempt_finish, attempt_next_create, transient_retries_used
from graphs.engine.state import Cause, Status, manifest_node, run_locked, subagent_by_node
from graphs.failures import FailureClassification
from graphs.logs import log_append
from graphs.models import Skill, WorkGraphRun, WorkNodeExecution
from graphs.retries import transient_backoff_seconds, transient_retry_allowed, transient_retry_refusal
from graphs.storable import storable

DEFAULT_MAX_ATTEMPTS = 3
# Which stage a final verdict's root cause sends the run back to.
DYNAMIC_ROOT_CAUSES = {"planning": "planner", "coder": "coder", "skill_defect": "coder"}
VERDICT_FEEDBACK_CHARS = 4000


@dataclass(frozen=True)
class _Failure:
    run: WorkGraphRun
    execution: WorkNodeExecution
    action: str
    issues: list[str]
    content: str
    reads_verdict: bool

    @property
    def findings(self) -> list[str]:
        """What the rerun attempts are told: the judge's issues and, when the judgment read a verdict,
        the verdict's own words (the issue alone says only that it was not pass)."""
        if not self.reads_verdict:
            return self.issues
        return [*self.issues, f"the verdict reads:\n{self.content[:VERDICT_FEEDBACK_CHARS]}"]


def attempt_judgment_failed(
    execution: WorkNodeExecution, *, worker: str, node: dict, judgment: Judgment, output: dict,
    failure: FailureClassification | None = None, error: str = "",
) -> None:
    """Record the failed judgment (classified by ``failure``, else by the rules) and create the attempts
    the node's ``on_fail`` calls for, or leave the failure terminal once its attempts are used up.
    ``error`` replaces the default "judgment failed: <issues>" when the failure has a reason of its own
    (an external node's timeout)."""
    on_fail = node.get("on_fail") or {}
    action = on_fail.get("action", "hard_fail")
    max_attempts = int(on_fail.get("max_attempts") or DEFAULT_MAX_ATTEMPTS)
    with run_locked(execution.run_id) as run:
        error = error or "judgment failed: " + "; ".join(judgment.issues)
        if not attempt_finish(execution, worker=worker, status=Status.FAILED, output=output, judgment=judgment,
                              error=error, failure=failure):
            return
        attempts = run.executions.filter(node_id=execution.node_id).exclude(cause=Cause.TRANSIENT_RETRY).count()
        respond = _ACTIONS.get(action)
        if respond is None or attempts >= max_attempts:
            reason = "hard_fail" if action == "hard_fail" else f"{action} exhausted after {attempts} attempts"
            log_append(execution=execution, event="on_fail", action=action, outcome="terminal", reason=reason)
            return
        respond(_Failure(run=run, execution=execution, action=action,
                         issues=judgment.issues or ["the judge gave no details"], content=output["text"],
                         reads_verdict=action == "dynamic_loop_back" or _judgment_reads_verdict(node)))


def _judgment_reads_verdict(node: dict) -> bool:
    judgment = node.get("judgment") or {}
    return judgment.get("kind") == "mechanical" and judgment.get("check_ref") == "verdict_says_pass"


def _retry_self(failure: _Failure) -> None:
    attempt_next_create(failure.run, failure.execution.node_id, cause=Cause.RETRY_SELF,
                        feedback=[f"Your previous attempt was rejected: {issue}" for issue in failure.findings])
    log_append(execution=failure.execution, event="on_fail", action=failure.action, outcome="retrying")


def _loop_back(failure: _Failure) -> None:
    manifest, failing = failure.run.graph_manifest, failure.execution.node_id
    target = manifest_graph.loop_back_target(manifest, failing)
    if target is None:
        log_append(execution=failure.execution, event="on_fail", action=failure.action, outcome="terminal",
                   reason="no on_failure edge")
        return
    rerun = manifest_graph.nodes_between(manifest, target=target, failing=failing)
    _rerun(failure.run, rerun=rerun, cause=Cause.LOOP_BACK, failing=failing, issues=failure.findings)
    log_append(execution=failure.execution, event="on_fail", action=failure.action, outcome="looped_back",
               target=target, rerun=rerun)


def _dynamic_loop_back(failure: _Failure) -> None:
    run, failing = failure.run, failure.execution.node_id
    root_cause = first_root_cause(failure.content) or "coder"
    stage = DYNAMIC_ROOT_CAUSES.get(root_cause, "coder")
    if root_cause == "skill_defect":
        _skills_flag(run, stage=stage, note="; ".join(failure.issues) or failure.content[:2000])
    rerun = _stage_and_downstream(run, stage=stage, failing=failing)
    _rerun(run, rerun=rerun, cause=Cause.DYNAMIC_LOOP_BACK, failing=failing, issues=failure.findings)
    log_append(execution=failure.execution, event="on_fail", action=failure.action, outcome="looped_back",
               root_cause=root_cause, stage=stage, rerun=rerun)


_ACTIONS: dict[str, Callable[[_Failure], None]] = {
    "retry_self": _retry_self,
    "loop_back": _loop_back,
    "dynamic_loop_back": _dynamic_loop_back,
}


def _rerun(run: WorkGraphRun, *, rerun: Sequence[str], cause: str, failing: str, issues: list[str]) -> None:
    feedback = [f"Node {failing!r} failed its judgment after using this work: {issue}" for issue in issues]
    for node_id in rerun:
        attempt_next_create(run, node_id, cause=cause, cause_node_id=failing, feedback=feedback)


def _stage_and_downstream(run: WorkGraphRun, *, stage: str, failing: str) -> list[str]:
    manifest = run.graph_manifest
    owned = {node_id for node_id, org in subagent_by_node(run).items() if org == stage}
    chosen = set(owned) | {failing}
    for node_id in owned:
        chosen |= manifest_graph.downstream_of(manifest, node_id)
    return [node_id for node_id in manifest_graph.topological_order(manifest) if node_id in chosen]


def _skills_flag(run: WorkGraphRun, *, stage: str, note: str) -> None:
    owners = subagent_by_node(run)
    skill_ids = {
        node.get("skill_ref")
        for node in run.graph_manifest.get("nodes", [])
        if node.get("skill_ref") and owners.get(node["node_id"]) == stage
    }
    Skill.objects.filter(skill_id__in=skill_ids).update(defect_reported_at=timezone.now(), defect_note=note[:4000])


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
