"""Running one node attempt: claim it, produce and judge its output, record it, advance the run.

Finishing a row is conditional on the worker still owning it (``record.attempt_finish``): a worker
that was presumed dead and replaced cannot commit a second result.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import InterfaceError, OperationalError, connection
from django.db.models import Q
from django.utils import timezone

from graphs.agents import AgentCancelled, AgentError, AgentRunner, get_runner
from graphs.domain.manifest_nodes import is_command_node, is_external_node
from graphs.domain.prompts import TaskBrief, node_prompt
from graphs.engine.attempt_commands import attempt_command_run, command_output_fields, commands_refusal
from graphs.engine.calls import attempt_agent_call
from graphs.engine.change_review import attempt_check_brief, attempt_review_brief, attempt_review_wait_recorder
from graphs.engine.changes import ChangeKeeper, change_land, change_review_hold, workspace_judgment
from graphs.engine.claims import chain_next, chain_next_claimed, continuation_ask, continuing, queued_attempt_claim
from graphs.engine.classify import attempt_failure_classify
from graphs.engine.external import attempt_external_wait
from graphs.engine.judgment import AttemptJudgeRequest, judgment_run
from graphs.engine.on_fail import (
    agent_error_text,
    attempt_agent_failed,
    attempt_commands_refused,
    attempt_crashed,
    attempt_judgment_failed,
    attempt_workspace_failed,
)
from graphs.engine.record import (
    Recorder,
    attempt_failure_facts,
    attempt_finish,
    attempt_input_keep,
    attempt_passed_recorder,
)
from graphs.engine.recovery import attempt_lost
from graphs.engine.scheduler import advance_after, run_advance
from graphs.engine.state import GraphShape, Status, graph_shape
from graphs.logs.events import node_states_emit
from graphs.logs.store import log_append, log_file_close, log_file_close_soon, log_file_open, log_writes_wait
from graphs.models import Task, WorkGraphRun, WorkNodeExecution
from graphs.profiles.resolve import profiles_held
from graphs.runs.facts import usable_attempts
from graphs.runs.heartbeat import execution_heartbeat, worker_name
from graphs.runs.status import run_stop_reason
from graphs.transactions import transaction_unflushed
from graphs.workspaces.sandbox import sandbox_state
from graphs.workspaces.worktrees import AttemptWorkspace, WorkspaceError, attempt_workspace

logger = logging.getLogger(__name__)

# How long a node job may go on running the dependants it readied itself (see node_execute_job).
CONTINUE_FOR_SECONDS = 5.0


def node_execute_job(node_exec_id: str) -> None:
    """Run the attempt, then — while the job is young and no other job waits — a dependant it made
    ready, in this same worker.

    The worker that readied a chain's next node is free and holds warm connections, where a broker
    round trip per node would cost more than the engine's own work on a quick node. The dependant is
    claimed for this worker in the very transaction that readies it, and starts with its upstream
    output in hand. While a job waits for a worker (another run's node, say), or past
    ``CONTINUE_FOR_SECONDS``, every dependant goes through the executor: runs sharing the workers take
    turns (see ``claims.continuing``). A worker that dies in between leaves a running attempt with no
    heartbeat, which the reaper fails and retries, as for any dead worker.
    """
    continue_until = time.monotonic() + CONTINUE_FOR_SECONDS
    execution = _attempt_claim(node_exec_id)
    handed = _NOTHING_HANDED
    # The attempts of one job run with the agent profiles the first of them resolved.
    with profiles_held():
        while execution is not None:
            task = execution.run.task
            following, handed = _attempt_run(execution, runner=get_runner(execution.run.runner_name()),
                                             continue_until=continue_until, handed=handed)
            if following is None and continuing(continue_until):
                following = _attempt_claim_next(execution.run_id, task=task)
            execution = following
    # No log this job handed to the closer thread is left behind when the job ends (and with it,
    # maybe, the process: a recycled or stopped worker).
    log_writes_wait()


@dataclass(frozen=True)
class _Handover:
    """What an attempt leaves in hand for the one its worker runs next of the same run: the upstream
    outputs it read and its own (the latest successful ones, as a rerun of one would have superseded
    the attempt claimed with it), and the shape it ran with."""

    outputs: dict[str, str] = field(default_factory=dict)
    shape: GraphShape | None = None


_NOTHING_HANDED = _Handover()


def node_execution_run(*, node_exec_id: Any, runner: AgentRunner | None = None) -> None:
    """Claim a queued attempt, produce and judge its output, record the result and advance the run."""
    execution = _attempt_claim(node_exec_id)
    if execution is not None:
        _attempt_run(execution, runner=runner or get_runner(execution.run.runner_name()))


def _attempt_claim(node_exec_id: Any) -> WorkNodeExecution | None:
    """Take a queued attempt for this worker and open its log; None when it is not queued (any more)."""
    now = timezone.now()
    # Claim, read and open the log in one transaction, which need not wait for the disk: a claim a
    # database crash loses leaves the attempt queued for the reaper (see graphs.transactions).
    with transaction_unflushed():
        claimed = WorkNodeExecution.objects.filter(pk=node_exec_id, status=Status.QUEUED).update(
            status=Status.RUNNING, started_at=now, heartbeat_at=now, worker=worker_name()
        )
        if claimed != 1:
            return None  # another worker has it, or it was cancelled/reaped: a redelivered job does nothing
        # The manifest comes from the run's shape, parsed once per version, not with every attempt.
        execution = (
            WorkNodeExecution.objects.select_related("run__task__project").defer("run__graph_manifest")
            .get(pk=node_exec_id)
        )
        node_states_emit(run_id=execution.run_id, rows=[execution])
        log_file_open(execution=execution)
    return execution


def _attempt_claim_next(run_id: Any, *, task: Task) -> WorkNodeExecution | None:
    """Claim for this worker a queued attempt of the run that may start now, if there is one."""
    # A claim a database crash loses leaves the attempt queued for the reaper (see graphs.transactions).
    with transaction_unflushed():
        execution = queued_attempt_claim(run_id=run_id, worker=worker_name(), project_id=task.project_id)
    if execution is not None:
        execution.run.task = task
    return execution


def _attempt_run(
    execution: WorkNodeExecution,
    *,
    runner: AgentRunner,
    continue_until: float | None = None,
    handed: _Handover = _NOTHING_HANDED,
) -> tuple[WorkNodeExecution | None, _Handover]:
    """Run an attempt claimed by this worker: produce and judge its output, record it, advance the run.

    Until ``continue_until`` (a ``time.monotonic()`` value), while no other job waits, one dependant made
    ready (or, in a fan-out, a queued sibling) is claimed for this worker instead of handed to the
    executor; it is returned, with what this attempt leaves in hand for it (``handed`` is what the last
    one left), for the caller to run next.
    """
    me = worker_name()
    run = execution.run
    # Which sandbox this worker runs the attempt's agent and commands in: workers on other machines may differ.
    log_append(execution=execution, event="node_start", node_id=execution.node_id, attempt=execution.attempt,
               cause=execution.cause, worker=me, sandbox="bwrap" if sandbox_state().confined else "none")
    record: Recorder | None = None
    shape: GraphShape | None = None
    known = dict(handed.outputs)
    try:
        shape = _shape_of(run, handed=handed.shape)
        run.graph_manifest = shape.manifest
        if _external_wait_begun(execution, shape=shape, worker=me):
            return None, _NOTHING_HANDED  # the log stays open: the report (or the deadline) writes the attempt's end
        record = _attempt_body(execution, shape=shape, runner=runner, worker=me, upstream_known=known)
    except (OperationalError, InterfaceError) as error:
        _database_lost(execution, worker=me, error=error)
    except Exception as error:  # a bug must not leave the row running forever
        logger.exception("node %s attempt %s crashed", execution.node_id, execution.attempt)
        attempt_crashed(execution, worker=me, error=error)

    asked = continuation = continuation_ask(continue_until, worker=me, project_id=run.task.project_id)
    log_closed = False

    def close_log() -> None:
        nonlocal log_closed
        log_file_close(execution=execution)
        log_closed = True

    advanced = False
    try:
        # A success's log closes in the transaction that records it (one commit for both), unless the
        # advance claims a dependant for this worker: the log then closes on the closer thread (an
        # fsync and an UPDATE) while that dependant runs here. A chain's node claims its one dependant
        # without the run lock; failing that, its end is recorded and the locked advance records nothing.
        chain = chain_next(shape, execution.node_id) if None not in (record, continuation, shape) else None
        if chain is None or not chain_next_claimed(execution, dependant=chain, record=record, close_log=close_log,
                                                   continuation=continuation, shape=shape):
            if continuation is not None and not continuation.free():
                continuation = None  # a job waits: what this advance readies goes through the executor
            advance_after(run_id=run.run_id, node_id=execution.node_id, record=None if chain else record,
                          close_log=close_log if record is not None and chain is None else None,
                          continuation=continuation, shape_hint=shape)
        advanced = True
    except (OperationalError, InterfaceError) as error:
        # Nothing of the failed transaction is kept: a result it was to record is lost with it.
        _database_lost(execution, worker=me, error=error)
        run_advance(run_id=run.run_id)
        continuation = None
    finally:
        if asked is not None:
            asked.free()  # the broker's answer is read whatever happened: its connection goes back to the pool
        if not (advanced and log_closed):
            if advanced and continuation is not None and continuation.claimed is not None:
                log_file_close_soon(execution=execution)  # beside the dependant this worker runs next
            else:
                # A failure's dependants were queued before its log is closed (an fsync and an UPDATE):
                # they start on another worker while this one finishes its bookkeeping.
                log_file_close(execution=execution)
    if continuation is None or continuation.claimed is None:
        return None, _NOTHING_HANDED
    following = continuation.claimed
    # The run as the advance read it (under its lock, or as this attempt had it when a chain's claim
    # found it unchanged), with the task and project this attempt loaded.
    following.run.task = run.task
    # A chain's next node needs this attempt's output; a fan-out's next leaf, the root's output this
    # attempt read.
    node = (shape.nodes.get(execution.node_id) or {}) if shape is not None else {}
    carried = {dep: known[dep] for dep in node.get("depends_on") or [] if dep in known}
    return following, _Handover(outputs={**carried, execution.node_id: execution.output_payload.get("text", "")},
                                shape=shape)


def _shape_of(run: WorkGraphRun, *, handed: GraphShape | None) -> GraphShape:
    """The shape an attempt of ``run`` runs with: the one the last attempt handed on, while the run was
    still at its version when this one was claimed, else the run's own.

    A leaf that settled without looking trusts the sibling it claimed to judge the run by the same
    manifest, so that the sibling's advance finds an append made meanwhile (see fan_in): the shape
    is handed on, not looked up again, which could give a newer version's.
    """
    if handed is not None and handed.version == run.manifest_version:
        return handed
    return graph_shape(run)


def _external_wait_begun(execution: WorkNodeExecution, *, shape: GraphShape, worker: str) -> bool:
    """Hand an external node's attempt to the outside with its prompt; True when the attempt is the
    outside's now (or ended meanwhile), False when it is this worker's to run (or to cancel)."""
    node = shape.nodes.get(execution.node_id)
    if node is None or not is_external_node(node) or execution.run.cancel_requested_at is not None:
        return False
    upstream = _upstream_outputs(execution, node, known={})
    feedback = list(execution.input_payload.get("feedback", []))
    prompt = node_prompt(node=node, brief=TaskBrief.from_task(execution.run.task), upstream_outputs=upstream,
                         feedback=feedback)
    payload = {**execution.input_payload, "prompt": prompt, "upstream": sorted(upstream), "feedback": feedback}
    attempt_external_wait(execution, node=node, worker=worker, input_payload=payload)
    return True


def _database_lost(execution: WorkNodeExecution, *, worker: str, error: Exception) -> None:
    """The database went away under an attempt (a restart, a failover, a killed backend), so what the
    agent produced could not be recorded. On a new connection the attempt is failed as an
    infrastructure loss and retried, exactly as if its worker had died."""
    logger.warning("node %s attempt %s lost its database connection: %s", execution.node_id, execution.attempt, error)
    connection.close()
    attempt_lost(execution, still_owned=Q(worker=worker), error=f"database connection lost: {error}".strip())


def _attempt_body(
    execution: WorkNodeExecution,
    *,
    shape: GraphShape,
    runner: AgentRunner,
    worker: str,
    upstream_known: dict[str, str],
) -> Recorder | None:
    """Run the attempt and record how it ended — except a passed judgment, which is returned as the
    function that records it, for the caller to call in the same transaction as the run's advance.

    ``upstream_known`` holds outputs of upstream nodes already in hand (the latest successful ones);
    those this attempt reads are added to it.
    """
    run = execution.run
    node = shape.nodes.get(execution.node_id)
    if node is None:
        attempt_finish(execution, worker=worker, status=Status.FAILED, error="the node is not in the run's manifest")
        return None
    if run.cancel_requested_at is not None:
        attempt_finish(execution, worker=worker, status=Status.CANCELLED, error=run_stop_reason(run.pk))
        return None
    refusal = commands_refusal(node, allowed=run.task.project.allow_commands)
    if refusal is not None:
        attempt_commands_refused(execution, worker=worker, reason=refusal)
        return None
    upstream = _upstream_outputs(execution, node, known=upstream_known)
    try:
        # An aggregating node writes nothing: it needs no worktree of its own. A command node runs in one
        # whatever its edges, as what it runs may write.
        writes = is_command_node(node) or execution.node_id not in shape.zero_token
        with attempt_workspace(execution) if writes else nullcontext() as workspace:
            return _attempt_work(execution, node=node, shape=shape, runner=runner, worker=worker, upstream=upstream,
                                 workspace=workspace)
    except WorkspaceError as error:
        attempt_workspace_failed(execution, worker=worker, error=error)
        return None


def _attempt_work(
    execution: WorkNodeExecution,
    *,
    node: dict,
    shape: GraphShape,
    runner: AgentRunner,
    worker: str,
    upstream: dict[str, str],
    workspace: AttemptWorkspace | None,
) -> Recorder | None:
    """The attempt's work in its folder — its own worktree, or the project's folder when that is not a
    git repository: produce and judge the output, then land the change or keep it (see
    ``_attempt_body``)."""
    run = execution.run
    feedback = list(execution.input_payload.get("feedback", []))
    brief = TaskBrief.from_task(run.task)
    cancel_event = threading.Event()
    cwd = workspace.cwd if workspace is not None else Path(run.task.project.target_folder)
    command = None
    keep = ChangeKeeper(workspace, execution)
    with execution_heartbeat(execution, worker=worker, cancel_event=cancel_event):
        try:
            if is_command_node(node):
                prompt = ""
                command = attempt_command_run(execution, argv=node["command"], purpose="node", cwd=cwd,
                                              timeout_seconds=node.get("timeout_seconds"), cancel_event=cancel_event)
                text, accounting = command.output, command_output_fields(command)
            elif execution.node_id in shape.zero_token:
                prompt = ""
                text, accounting = _aggregate(upstream), {"usage": None}
                log_append(execution=execution, event="aggregated", upstream=list(upstream))
            else:
                prompt = node_prompt(node=node, brief=brief, upstream_outputs=upstream, feedback=feedback,
                                     review=attempt_review_brief(execution), check=attempt_check_brief(execution))
                result = attempt_agent_call(runner, execution, node=node, prompt=prompt, purpose="node",
                                            cancel_event=cancel_event, cwd=cwd)
                text, accounting = result.text, result.accounting()
            attempt_input_keep(execution, node=node, prompt=prompt, upstream=upstream, feedback=feedback)
            judgment = keep.tampered() or workspace_judgment(workspace, node) or judgment_run(
                AttemptJudgeRequest(runner=runner, execution=execution, node=node, content=text,
                                    cancel_event=cancel_event, cwd=cwd, command=command))
            # A command judgment runs in the worktree too: what it left is checked as the agent's is.
            judgment = keep.tampered() or judgment
            # A failure is classified while the attempt still beats: the judge agent may be asked.
            failure = None if judgment.ok else attempt_failure_classify(
                execution, facts=attempt_failure_facts(error="", judgment=judgment, output={"text": text}),
                runner=runner, node=node, cancel_event=cancel_event, cwd=cwd)
        except AgentCancelled:
            keep()
            attempt_finish(execution, worker=worker, status=Status.CANCELLED, error=run_stop_reason(run.pk))
            return None
        except AgentError as error:
            keep()
            failure = attempt_failure_classify(
                execution, facts=attempt_failure_facts(error=agent_error_text(error), agent_error_kind=error.kind),
                runner=runner, node=node, cancel_event=cancel_event, cwd=cwd)
            attempt_agent_failed(execution, worker=worker, error=error, failure=failure)
            return None
    output = {"text": text, **accounting}
    if judgment.ok and workspace is not None:
        if change_review_hold(workspace, execution):
            return attempt_review_wait_recorder(execution, worker=worker, output=output, judgment=judgment)
        judgment = change_land(workspace, execution, judgment)
    else:
        keep()
    if judgment.ok:
        return attempt_passed_recorder(execution, worker=worker, node=node, output=output, judgment=judgment)
    # ``failure`` is None when the judgment passed and the change then failed to land (a merge conflict):
    # the rules classify that one when it is recorded.
    attempt_judgment_failed(execution, worker=worker, node=node, judgment=judgment, output=output, failure=failure)
    return None


def _upstream_outputs(execution: WorkNodeExecution, node: dict, *, known: dict[str, str]) -> dict[str, str]:
    """The latest successful output of each dependency of ``node``; those in ``known`` are not read again,
    those read are added to it."""
    dependencies = list(node.get("depends_on") or [])
    outputs = {dep: text for dep, text in known.items() if dep in dependencies}
    unknown = [dep for dep in dependencies if dep not in outputs]
    if unknown:
        # A partial node that is not required for completion still hands its output on.
        rows = usable_attempts(WorkNodeExecution.objects.filter(run_id=execution.run_id, node_id__in=unknown))
        # Tuples, not instances: an instance would fetch its deferred fields again, one query per node.
        for node_id, output in rows.values_list("node_id", "output_payload"):
            outputs.setdefault(node_id, output.get("text", ""))
        known.update({dep: outputs[dep] for dep in unknown if dep in outputs})
    return {dep: outputs[dep] for dep in dependencies if dep in outputs}


def _aggregate(upstream: dict[str, str]) -> str:
    return "\n\n".join(f"## {node_id}\n\n{text}" for node_id, text in upstream.items())
