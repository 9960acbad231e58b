"""An agent call made for a node attempt: the node's own call, or its LLM judge's."""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings

from graphs.agents import AgentCall, AgentCancelled, AgentError, AgentResult, AgentRunner
from graphs.logs.store import log_append
from graphs.metrics.counters import agent_call_timed
from graphs.models import WorkNodeExecution
from graphs.profiles.resolve import attempt_profile
from graphs.runs.accounting import call_account
from graphs.runs.budgets import BudgetSpentError, budget_check_after_call, budget_for_call
from graphs.workspaces.libgit import folder_touched


def attempt_agent_call(
    runner: AgentRunner,
    execution: WorkNodeExecution,
    *,
    node: dict,
    prompt: str,
    purpose: str,
    cancel_event: threading.Event,
    cwd: Path,
) -> AgentResult:
    """Call the attempt's org node in ``cwd`` (the attempt's workspace) and return its result.

    What the agent prints streams into the attempt's log as it arrives: plain lines as
    ``agent_output``, the events a runner reports (``tool_call``, ``tool_result``, …) as lines of their
    own kind, each marked with the call's purpose. A run with a budget passes the call what is left
    of it, and is stopped once the call's cost spends it (see graphs.runs.budgets); a call whose run has
    nothing left is not made.
    """
    org_node = execution.subagent_type or node.get("subagent_type") or "worker"
    try:
        max_budget_usd = budget_for_call(execution)
    except BudgetSpentError as spent:
        raise AgentCancelled(str(spent)) from None
    profile = attempt_profile(execution=execution, org_node=org_node, purpose=purpose)
    call = AgentCall(
        org_node=org_node,
        prompt=prompt,
        cwd=cwd,
        timeout=settings.WORKGRAPH_AGENT_TIMEOUT,
        purpose=purpose,
        node=node,
        attempt=execution.attempt,
        commands_allowed=execution.run.task.project.allow_commands,
        on_line=lambda text: log_append(execution=execution, event="agent_output", purpose=purpose, text=text),
        on_event=lambda event, fields: log_append(execution=execution, event=event, purpose=purpose, **fields),
        cancel_event=cancel_event,
        max_budget_usd=max_budget_usd,
        profile=profile,
    )
    log_append(execution=execution, event="agent_call", purpose=purpose, org_node=call.org_node)
    # What the agent writes in its folder is staged afresh, not taken from a staging before the call.
    folder_touched(cwd)
    try:
        with agent_call_timed(org_node=org_node):
            result = runner.run(call)
    except AgentError as error:
        # A call that failed after spending (a turn limit, an error result) is paid for all the same.
        if error.spent is not None:
            call_account(execution, error.spent)
            budget_check_after_call(execution)
        raise
    call_account(execution, result)
    budget_check_after_call(execution)
    return result
