"""Planning: ask an org node's agent for a graph_manifest and record the call as a planning node.

A fresh call creates the run; an append call (``append_to_run_id``) adds the org node's own nodes to
an existing run. Either way the call is kept as a synthetic ``WorkNodeExecution`` — ``__planning__``
or ``__planning__:<org_node>`` — holding the prompt, the raw response, the extracted manifest, the
normalization notes and any validation errors, with its own JSONL log, so a reviewer can open it
(graphs.planning.planning_node). What the call answered is stored by graphs.planning.plan_store.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from graphs.agents import AgentCall, AgentCancelled, AgentError, AgentResult, AgentRunner, get_runner
from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph
from graphs.domain.failures import AGENT_FAILED, MANIFEST_UNUSABLE
from graphs.domain.prompts import TaskBrief, answer_with_one_repair, planning_prompt
from graphs.domain.retries import transient_backoff_seconds, transient_retry_allowed
from graphs.domain.storable import storable
from graphs.logs.store import log_append
from graphs.metrics.counters import agent_call_timed
from graphs.models import PLANNING_NODE_ID, Skill, Task, WorkGraphRun, WorkNodeExecution
from graphs.planning.gaps import acceptance_items, gap_answer_parse, gap_planning_prompt, gap_snapshot
from graphs.planning.plan_store import run_append_merge, run_fresh_manifest_store, run_still_open
from graphs.planning.planning_node import (
    PlanningAttempt,
    PlanningFailedError,
    planning_execution_create,
    planning_failure_record,
    planning_success_record,
)
from graphs.planning.template_planning import TemplateGuide, template_guide_for, template_plan_request
from graphs.profiles.resolve import attempt_profile
from graphs.runs.accounting import call_account
from graphs.runs.budgets import BudgetSpentError, budget_check_after_call, budget_for_call
from graphs.runs.heartbeat import execution_heartbeat
from graphs.runs.status import planning_run_create
from graphs.workspaces.worktrees import WorkspaceError, run_head_checkout


@dataclass(frozen=True)
class PlanResult:
    run: WorkGraphRun
    graph_manifest: dict
    new_node_ids: list[str]
    planning_execution: WorkNodeExecution


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
    see graphs/planning/template_planning.py.
    """
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
        run = planning_run_create(task=task)
        existing_graph = {}

    runner = runner or get_runner(run.runner_name())
    brief = dataclasses.replace(TaskBrief.from_task(task), goal_text=goal_text)
    gap_round = _gap_round_number(run) if task.planning_mode == Task.PlanningMode.GAP_DRIVEN else None
    # The task's own skill guides its fresh plan; appended stages follow their catalogs
    # unless a skill is handed over explicitly. A gap-driven round answers with tasks, not a template's graph.
    guide = None if gap_round else template_guide_for(
        skill=skill if skill is not None else (None if appending else task.skill), pins=run.revision_pins)
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
    attempt = PlanningAttempt(prompt=prompt)
    execution = planning_execution_create(
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
        call = dataclasses.replace(call, profile=attempt_profile(execution=execution, org_node=org_node,
                                                                 purpose="plan"))
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
            run, new_ids = run_still_open(run_id=run.run_id), []  # a closed gap: nothing to append
        elif appending:
            run, new_ids = run_append_merge(run_id=run.run_id, addition=attempt.manifest, org_node=org_node,
                                             execution=execution)
        else:
            run, new_ids = run_fresh_manifest_store(run=run, manifest=attempt.manifest)
    except PlanningFailedError as failure:
        planning_failure_record(execution=execution, run=run, attempt=attempt, reason=failure.reason,
                                fresh=not appending, cancelled=failure.cancelled, code=failure.code,
                                agent_error_kind=failure.agent_error_kind)
        failure.planning_execution = execution
        raise
    except WorkspaceError as error:
        reason = f"planning stopped: workspace error: {error}"
        planning_failure_record(execution=execution, run=run, attempt=attempt, reason=reason, fresh=not appending,
                                cancelled=False)
        raise PlanningFailedError(reason, planning_execution=execution) from error
    except Exception as error:
        # Whatever broke, the planning node must not be left "running" and the run not "planning".
        reason = f"planning stopped by an internal error: {error!r}"
        planning_failure_record(execution=execution, run=run, attempt=attempt, reason=reason, fresh=not appending,
                                cancelled=False)
        raise PlanningFailedError(reason, planning_execution=execution) from error
    planning_success_record(execution=execution, attempt=attempt, new_node_ids=new_ids)
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


def _ask_for_manifest(
    runner: AgentRunner,
    call: AgentCall,
    *,
    attempt: PlanningAttempt,
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
    attempt: PlanningAttempt,
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
    attempt: PlanningAttempt,
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
    runner: AgentRunner, call: AgentCall, *, attempt: PlanningAttempt, execution: WorkNodeExecution
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
            with agent_call_timed(org_node=call.org_node):
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


def _accept_response(text: str, *, attempt: PlanningAttempt, existing_graph: Mapping[str, Sequence[str]]) -> bool:
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


def _agent_error_detail(error: AgentError) -> str:
    parts = [str(error)]
    if error.stderr:
        parts.append(f"stderr: {error.stderr.strip()[:2000]}")
    if error.stdout_head:
        parts.append(f"stdout: {error.stdout_head.strip()[:2000]}")
    if error.stdout_tail and error.stdout_tail.strip() != error.stdout_head.strip():
        parts.append(f"stdout tail: {error.stdout_tail.strip()[-2000:]}")
    return " | ".join(parts)
