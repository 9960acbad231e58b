"""Planning: ask an org node's agent for a graph_manifest and record the call as a planning node.

A fresh call creates the run; an append call (``append_to_run_id``) adds the org node's own nodes to
an existing run. Either way the call is kept as a synthetic ``WorkNodeExecution`` — ``__planning__``
or ``__planning__:<org_node>`` — holding the prompt, the raw response, the extracted manifest, the
normalization notes and any validation errors, with its own JSONL log, so a reviewer can open it.

Failure leaves nothing half-written: the manifest is merged in one locked update or not at all, and
a run being created by a failed call ends ``planning_failed`` with the reason on its planning node.
A call stopped by a cancel of its run is not a failure: the call and a run it was creating end
``cancelled``.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from graphs.agents import AgentCall, AgentCancelled, AgentError, AgentResult, AgentRunner, get_runner
from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph
from graphs.domain.failures import AGENT_FAILED, MANIFEST_UNUSABLE, FailureFacts, failure_classify
from graphs.domain.prompts import TaskBrief, answer_with_one_repair, planning_prompt
from graphs.domain.retries import transient_backoff_seconds, transient_retry_allowed
from graphs.domain.storable import storable
from graphs.errors import WorkGraphError
from graphs.logs.events import node_states_emit, run_event_emit
from graphs.logs.store import log_append, log_file_close, log_file_open
from graphs.models import PLANNING_NODE_ID, Skill, Task, WorkGraphRun, WorkNodeExecution, planning_node_id
from graphs.planning.append_review import append_review_open
from graphs.planning.gaps import acceptance_items, gap_answer_parse, gap_planning_prompt, gap_snapshot
from graphs.planning.templates import TemplateGuide, template_guide_for, template_plan_request
from graphs.runs.accounting import ACCOUNTING_FIELDS, call_account
from graphs.runs.budgets import BudgetSpentError, budget_check_after_call, budget_for_call
from graphs.runs.heartbeat import execution_heartbeat, worker_name
from graphs.runs.status import run_status_set, run_stopped_finish, task_status_refresh
from graphs.workspaces.worktrees import WorkspaceError, run_head_checkout


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


@dataclass(frozen=True)
class PlanResult:
    run: WorkGraphRun
    graph_manifest: dict
    new_node_ids: list[str]
    planning_execution: WorkNodeExecution


@dataclass
class _Attempt:
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


def plan_work_graph(
    org_node: str,
    task: Task,
    goal_text: str,
    append_to_run_id: Any = None,
    *,
    runner: AgentRunner | None = None,
    timeout: float | None = None,
    skill: Skill | None = None,
    run: WorkGraphRun | None = None,
) -> PlanResult:
    """Plan a graph for ``task`` with ``org_node``'s agent; append to an existing run when asked.

    A fresh plan goes into ``run`` when given (a run created in ``planning`` when the plan was asked
    for), else into a new run.

    Returns the run, its whole (merged) manifest, the node_ids this call added and the planning node.
    Raises ``PlanningFailedError`` with the reason when the agent fails or its manifest is unusable.
    A team template guides the plan when ``skill`` (or, on a fresh plan, ``task.skill``) has one:
    see graphs/planning/templates.py.
    """
    runner = runner or get_runner()
    timeout = timeout if timeout is not None else settings.WORKGRAPH_AGENT_TIMEOUT
    appending = append_to_run_id is not None
    if appending:
        run = _run_for_append(append_to_run_id, task=task)
        existing_graph = manifest_graph.data_dependencies(run.graph_manifest or {"nodes": []})
    elif run is not None:
        run.refresh_from_db(fields=["status", "cancel_requested_at"])
        if run.status != WorkGraphRun.Status.PLANNING:
            raise PlanningFailedError(f"run {run.run_id} is {run.status}; nothing was planned", cancelled=True)
        existing_graph = {}
    else:
        with transaction.atomic():
            run = WorkGraphRun.objects.create(task=task, status=WorkGraphRun.Status.PLANNING)
            task_status_refresh(task_id=task.pk)
        existing_graph = {}

    brief = dataclasses.replace(TaskBrief.from_task(task), goal_text=goal_text)
    gap_round = _gap_round_number(run) if task.planning_mode == Task.PlanningMode.GAP_DRIVEN else None
    # The task's own skill guides its fresh plan; appended stages follow their catalogs
    # unless a skill is handed over explicitly. A gap-driven round answers with tasks, not a template's graph.
    guide = None if gap_round else template_guide_for(
        skill=skill if skill is not None else (None if appending else task.skill))
    if gap_round:
        prompt = gap_planning_prompt(brief=brief, acceptances=acceptance_items(task),
                                     snapshot=gap_snapshot(run, round_number=gap_round),
                                     existing_node_ids=tuple(existing_graph))
    else:
        prompt = planning_prompt(
            org_node=org_node, brief=brief, existing_node_ids=tuple(existing_graph),
            template_block=guide.prompt_block() if guide else None,
            commands_allowed=task.project.allow_commands,
        )
    attempt = _Attempt(prompt=prompt)
    execution = _planning_execution_create(
        run=run, org_node=org_node, prompt=attempt.prompt, append=appending, skill_pk=guide.skill_pk if guide else None
    )
    cancel_event = threading.Event()
    call = AgentCall(
        org_node=org_node,
        prompt=attempt.prompt,
        cwd=Path(task.project.target_folder),
        timeout=timeout,
        purpose="plan",
        existing_node_ids=tuple(existing_graph),
        planning_mode=Task.PlanningMode.GAP_DRIVEN if gap_round else Task.PlanningMode.GRAPH,
        commands_allowed=task.project.allow_commands,
        on_line=lambda text: log_append(execution=execution, event="agent_output", text=text),
        on_event=lambda event, fields: log_append(execution=execution, event=event, purpose="plan", **fields),
        cancel_event=cancel_event,
    )
    try:
        # The planning node beats like any node: a dead worker is then noticed by the reaper, and a
        # cancelled run stops its planning agent.
        # A planner reads the run branch's head, where the changes of the stages before it landed.
        with (run_head_checkout(run, name=f"planning-{execution.pk.hex[:8]}") as head,
              execution_heartbeat(execution, worker=execution.worker, cancel_event=cancel_event)):
            if head is not None:
                call = dataclasses.replace(call, cwd=head)
            if guide is not None:
                _ask_for_template_plan(runner, call, attempt=attempt, existing_graph=existing_graph,
                                       execution=execution, guide=guide)
            elif gap_round:
                _ask_for_gap_answer(runner, call, attempt=attempt, existing_graph=existing_graph,
                                    execution=execution, round_number=gap_round)
            else:
                _ask_for_manifest(runner, call, attempt=attempt, existing_graph=existing_graph, execution=execution)
        if appending and not attempt.manifest["nodes"]:
            run, new_ids = _run_still_open(run_id=run.run_id), []  # a closed gap: nothing to append
        elif appending:
            run, new_ids = _merge_into_run(run_id=run.run_id, addition=attempt.manifest, org_node=org_node,
                                           execution=execution)
        else:
            run, new_ids = _store_fresh_manifest(run=run, manifest=attempt.manifest)
    except PlanningFailedError as failure:
        _record_failure(execution=execution, run=run, attempt=attempt, reason=failure.reason, fresh=not appending,
                        cancelled=failure.cancelled, code=failure.code, agent_error_kind=failure.agent_error_kind)
        failure.planning_execution = execution
        raise
    except WorkspaceError as error:
        reason = f"planning stopped: workspace error: {error}"
        _record_failure(execution=execution, run=run, attempt=attempt, reason=reason, fresh=not appending,
                        cancelled=False)
        raise PlanningFailedError(reason, planning_execution=execution) from error
    except Exception as error:
        # Whatever broke, the planning node must not be left "running" and the run not "planning".
        reason = f"planning stopped by an internal error: {error!r}"
        _record_failure(execution=execution, run=run, attempt=attempt, reason=reason, fresh=not appending,
                        cancelled=False)
        raise PlanningFailedError(reason, planning_execution=execution) from error
    _record_success(execution=execution, attempt=attempt, new_node_ids=new_ids)
    return PlanResult(run=run, graph_manifest=run.graph_manifest, new_node_ids=new_ids, planning_execution=execution)


def _run_for_append(run_id: Any, *, task: Task) -> WorkGraphRun:
    run = WorkGraphRun.objects.filter(pk=run_id).first()
    if run is None:
        raise PlanningFailedError(f"there is no run {run_id} to append to")
    if run.task_id != task.pk:
        raise PlanningFailedError(f"run {run_id} belongs to another task")
    if run.is_finished():
        raise PlanningFailedError(f"run {run_id} is {run.status}; nodes can no longer be appended to it")
    return run


def _planning_execution_create(
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


def _ask_for_manifest(
    runner: AgentRunner,
    call: AgentCall,
    *,
    attempt: _Attempt,
    existing_graph: Mapping[str, Sequence[str]],
    execution: WorkNodeExecution,
) -> None:
    """Call the agent (and once more with a repair request if needed) until a valid manifest is in hand."""
    outcome = answer_with_one_repair(
        ask=lambda prompt: _call_agent(runner, dataclasses.replace(call, prompt=prompt), attempt=attempt,
                                       execution=execution).text,
        prompt=attempt.prompt,
        problems=lambda text: [] if _accept_response(text, attempt=attempt, existing_graph=existing_graph) else (
            attempt.errors or ["the answer is not usable"]),
        on_repair=lambda errors: log_append(execution=execution, event="repair_requested", errors=errors),
    )
    attempt.repair_prompt = outcome.repair_prompt
    if outcome.errors:
        raise PlanningFailedError("the agent's manifest is not usable: " + "; ".join(outcome.errors),
                                  code=MANIFEST_UNUSABLE)


def _gap_round_number(run: WorkGraphRun) -> int:
    """Which round of gap-driven planning the next call of the run is: one more than its planning calls."""
    return 1 + run.executions.filter(node_id__startswith=PLANNING_NODE_ID).count()


def _ask_for_gap_answer(
    runner: AgentRunner,
    call: AgentCall,
    *,
    attempt: _Attempt,
    existing_graph: Mapping[str, Sequence[str]],
    execution: WorkNodeExecution,
    round_number: int,
) -> None:
    """Ask for a gap answer (and once more with a repair request if needed): the tasks it plans become
    ``attempt.manifest``; an answer that closes the gap plans none."""
    max_tasks = settings.WORKGRAPH_MAX_NODES - len(existing_graph)

    def problems(text: str) -> list[str]:
        found, answer, errors = gap_answer_parse(text, existing_graph=existing_graph, max_tasks=max_tasks)
        attempt.extracted, attempt.errors = storable(found), errors
        if answer is not None:
            attempt.manifest, attempt.gap = answer.manifest, answer.as_dict(round_number=round_number)
        return errors

    outcome = answer_with_one_repair(
        ask=lambda prompt: _call_agent(runner, dataclasses.replace(call, prompt=prompt), attempt=attempt,
                                       execution=execution).text,
        prompt=attempt.prompt,
        problems=problems,
        on_repair=lambda errors: log_append(execution=execution, event="repair_requested", errors=errors),
    )
    attempt.repair_prompt = outcome.repair_prompt
    if outcome.errors:
        raise PlanningFailedError("the planner's gap answer is not usable: " + "; ".join(outcome.errors),
                                  code=MANIFEST_UNUSABLE)
    log_append(execution=execution, event="gap_answer", **attempt.gap)


def _ask_for_template_plan(
    runner: AgentRunner,
    call: AgentCall,
    *,
    attempt: _Attempt,
    existing_graph: Mapping[str, Sequence[str]],
    execution: WorkNodeExecution,
    guide: TemplateGuide,
) -> None:
    """Ask for a template-shaped plan and adapt it; an answer still unusable after one repair
    request falls back to a single-node plan instead of failing (agent errors still fail planning)."""
    attempt.adaptation = guide.report()

    def ask(prompt: str) -> str:
        return _call_agent(runner, dataclasses.replace(call, prompt=prompt), attempt=attempt, execution=execution).text

    outcome = template_plan_request(
        ask=ask, prompt=attempt.prompt, guide=guide, existing_graph=existing_graph,
        on_repair=lambda errors: log_append(execution=execution, event="repair_requested", errors=errors),
    )
    attempt.extracted, attempt.notes = storable(outcome.extracted), storable(outcome.notes)
    attempt.repair_prompt = outcome.repair_prompt
    attempt.manifest, attempt.adaptation = storable(outcome.manifest), storable(outcome.report)
    log_append(execution=execution, event="template_adapted", **outcome.report)


def _call_agent(
    runner: AgentRunner, call: AgentCall, *, attempt: _Attempt, execution: WorkNodeExecution
) -> AgentResult:
    # Transient agent errors (timeouts, rate limits, outages) are retried inside the one planning call,
    # with the same capped exponential backoff the engine uses for nodes.
    retry = 0
    while True:
        try:
            max_budget_usd = budget_for_call(execution)
        except BudgetSpentError as spent:
            raise PlanningFailedError(f"{spent}; the planning call was not made", cancelled=True) from None
        try:
            result = runner.run(dataclasses.replace(call, max_budget_usd=max_budget_usd))
        except AgentCancelled as error:
            raise PlanningFailedError("the run was cancelled while planning", cancelled=True) from error
        except AgentError as error:
            if error.spent is not None:
                call_account(execution, error.spent)
                budget_check_after_call(execution)
            detail = _agent_error_detail(error)
            if error.transient and transient_retry_allowed(retries_used=retry):
                delay = transient_backoff_seconds(retries_used=retry)
                log_append(execution=execution, event="agent_retry", kind=error.kind, message=detail, delay=delay)
                time.sleep(delay)
                retry += 1
                continue
            if error.stdout_head:
                attempt.raw_responses.append(storable(error.stdout_head))
            raise PlanningFailedError(f"the {call.org_node} agent failed ({error.kind}): {detail}", code=AGENT_FAILED,
                                      agent_error_kind=error.kind) from error
        result = dataclasses.replace(result, text=storable(result.text))
        attempt.raw_responses.append(result.text)
        if result.usage:
            attempt.usage.append(result.usage)
        attempt.agent_calls.append(result.accounting())
        call_account(execution, result)
        budget_check_after_call(execution)
        return result


def _accept_response(text: str, *, attempt: _Attempt, existing_graph: Mapping[str, Sequence[str]]) -> bool:
    """Extract, normalize and validate; keep what was learned on ``attempt``. True when usable."""
    extracted = storable(manifest_lib.extract_graph_manifest(text))  # a "\u0000" escape decodes to NUL
    attempt.extracted = extracted
    if extracted is None:
        attempt.errors = ["no graph_manifest JSON object (with a 'nodes' list) was found in the response"]
        return False
    try:
        normalized, notes = manifest_lib.normalize_graph_manifest_with_notes(extracted, existing_graph)
    except (TypeError, ValueError, AttributeError) as error:
        attempt.errors = [f"the manifest could not be normalized: {error}"]
        return False
    attempt.notes = notes
    limits = {"max_nodes": settings.WORKGRAPH_MAX_NODES - len(existing_graph),
              "max_depth": settings.WORKGRAPH_MAX_DEPTH}
    try:
        manifest_lib.validate_graph_manifest(normalized, existing_graph, **limits)
    except manifest_lib.ManifestError as error:
        attempt.errors = list(error.errors)
        return False
    attempt.errors = []
    attempt.manifest = normalized
    return True


def _store_fresh_manifest(*, run: WorkGraphRun, manifest: dict) -> tuple[WorkGraphRun, list[str]]:
    needs_approval = run.task.project.require_plan_approval
    with transaction.atomic():
        locked = WorkGraphRun.objects.select_for_update().filter(pk=run.pk).values("status", "cancel_requested_at")
        current = locked.get()
        if current["cancel_requested_at"] is not None or current["status"] != WorkGraphRun.Status.PLANNING:
            raise PlanningFailedError("the run was cancelled while planning", cancelled=True)
        WorkGraphRun.objects.filter(pk=run.pk).update(graph_manifest=manifest, manifest_version=1)
        run.graph_manifest, run.manifest_version = manifest, 1
        new_ids = manifest_graph.manifest_node_ids(manifest)
        run_event_emit(run_id=run.pk, event="nodes_appended", org_node=None, new_node_ids=new_ids, manifest_version=1)
        status = WorkGraphRun.Status.AWAITING_APPROVAL if needs_approval else WorkGraphRun.Status.READY
        run_status_set(run=run, status=status)
    return run, new_ids


def _run_still_open(*, run_id: Any) -> WorkGraphRun:
    """The run an answer that adds no node leaves as it is, once checked under its lock to be neither
    cancelled nor finished meanwhile (as a merge would check)."""
    with transaction.atomic():
        run = WorkGraphRun.objects.select_for_update().select_related("task__project").get(pk=run_id)
        if run.cancel_requested_at is not None:
            raise PlanningFailedError("the run was cancelled while planning", cancelled=True)
        if run.is_finished():
            raise PlanningFailedError(f"run {run_id} became {run.status} while planning")
    return run


def _merge_into_run(
    *, run_id: Any, addition: dict, org_node: str, execution: WorkNodeExecution
) -> tuple[WorkGraphRun, list[str]]:
    """Merge ``addition`` into the run under a row lock, re-checking against the manifest as it is now.

    The agent was asked with the node_ids of the moment; another append may have landed since, so
    collisions and limits are checked again inside the lock before anything is written. Where the
    project requires plan approval, the new nodes wait for a reviewer from the same commit on.
    """
    with transaction.atomic():
        run = WorkGraphRun.objects.select_for_update().select_related("task__project").get(pk=run_id)
        if run.cancel_requested_at is not None:
            raise PlanningFailedError("the run was cancelled while planning; nothing was appended", cancelled=True)
        if run.is_finished():
            raise PlanningFailedError(f"run {run_id} became {run.status} while planning; nothing was appended")
        current = run.graph_manifest or {"nodes": [], "edges": []}
        current_graph = manifest_graph.data_dependencies(current)
        try:
            manifest_lib.validate_graph_manifest(
                addition,
                current_graph,
                max_nodes=settings.WORKGRAPH_MAX_NODES - len(current_graph),
                max_depth=settings.WORKGRAPH_MAX_DEPTH,
            )
            merged = manifest_lib.merge_manifests(current, addition)
            depth = manifest_graph.graph_depth(merged)
        except manifest_lib.ManifestError as error:
            raise PlanningFailedError("the appended nodes do not fit the run: " + "; ".join(error.errors),
                                      code=MANIFEST_UNUSABLE) from error
        if depth > settings.WORKGRAPH_MAX_DEPTH:
            raise PlanningFailedError(
                f"the merged graph is {depth} nodes deep, over the limit of {settings.WORKGRAPH_MAX_DEPTH}"
            )
        run.graph_manifest = merged
        run.manifest_version += 1
        run.save(update_fields=["graph_manifest", "manifest_version"])
        new_ids = manifest_graph.manifest_node_ids(addition)
        run_event_emit(
            run_id=run.pk, event="nodes_appended", org_node=org_node, new_node_ids=new_ids,
            manifest_version=run.manifest_version,
        )
        append_review_open(run=run, planning_execution=execution, new_node_ids=new_ids)
    return run, new_ids


def _record_success(*, execution: WorkNodeExecution, attempt: _Attempt, new_node_ids: list[str]) -> None:
    execution.status = WorkNodeExecution.Status.SUCCEEDED
    execution.output_payload = _output_payload(attempt, new_node_ids=new_node_ids)
    execution.finished_at = timezone.now()
    execution.save(update_fields=["status", "output_payload", "finished_at", *ACCOUNTING_FIELDS])
    node_states_emit(run_id=execution.run_id, rows=[execution])
    log_append(execution=execution, event="node_completed", new_node_ids=new_node_ids)
    log_file_close(execution=execution)


def _record_failure(
    *, execution: WorkNodeExecution, run: WorkGraphRun, attempt: _Attempt, reason: str, fresh: bool, cancelled: bool,
    code: str = "", agent_error_kind: str = "",
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
    execution.save(update_fields=["status", "error", "output_payload", "finished_at", "failure", *ACCOUNTING_FIELDS])
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


def _output_payload(attempt: _Attempt, *, new_node_ids: list[str]) -> dict[str, Any]:
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


def _agent_error_detail(error: AgentError) -> str:
    parts = [str(error)]
    if error.stderr:
        parts.append(f"stderr: {error.stderr.strip()[:2000]}")
    if error.stdout_head:
        parts.append(f"stdout: {error.stdout_head.strip()[:2000]}")
    if error.stdout_tail and error.stdout_tail.strip() != error.stdout_head.strip():
        parts.append(f"stdout tail: {error.stdout_tail.strip()[-2000:]}")
    return " | ".join(parts)
