"""What agent calls cost: each call's usage added to its attempt, and totals per run and task.

Every call an attempt makes — its node call, its judge, a planning call and its repair — adds to the
attempt's counts in memory, and the attempt's result writes them with everything else (no query of
its own). Totals are sums in the database, one query each, however many attempts there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet, Sum

from graphs.agents import AgentResult
from graphs.agents.base import TOKEN_FIELDS, token_counts
from graphs.models import WorkNodeExecution

COUNT_FIELDS = (*TOKEN_FIELDS, "agent_calls", "num_turns", "tool_calls", "duration_api_ms")
ACCOUNTING_FIELDS = (*COUNT_FIELDS, "cost_usd", "model", "session_id")
# What a new attempt starts with: the scheduler builds attempts in memory from these.
ACCOUNTING_DEFAULTS: dict[str, Any] = {**dict.fromkeys(COUNT_FIELDS, 0), "cost_usd": None, "model": "",
                                       "session_id": ""}


def call_account(execution: WorkNodeExecution, result: AgentResult) -> None:
    """Add one finished call's usage and cost to its attempt, in memory (its result writes them)."""
    for name, value in token_counts(result.usage).items():
        setattr(execution, name, getattr(execution, name) + value)
    execution.agent_calls += 1
    execution.num_turns += result.num_turns or 0
    execution.tool_calls += result.tool_calls or 0
    execution.duration_api_ms += result.duration_api_ms or 0
    if result.cost_usd is not None:
        execution.cost_usd = (execution.cost_usd or Decimal(0)) + Decimal(str(result.cost_usd))
    execution.model = result.model or execution.model
    execution.session_id = result.session_id or execution.session_id


def accounting_of(execution: WorkNodeExecution) -> dict[str, Any]:
    """The attempt's accounting columns, to write with its result."""
    return {name: getattr(execution, name) for name in ACCOUNTING_FIELDS}


@dataclass(frozen=True)
class Spend:
    """What a set of attempts cost: calls, tokens, turns and dollars (None when none reported a cost)."""

    agent_calls: int
    cost_usd: Decimal | None
    usage: dict[str, int]
    num_turns: int
    tool_calls: int

    def summary(self) -> str:
        """One line for a page: ``$0.0520 · 1,344 tokens · 2 agent calls``."""
        if not self.agent_calls:
            return "no agent calls yet"
        cost = f"${self.cost_usd:.4f}" if self.cost_usd is not None else "cost not reported"
        tokens = sum(self.usage.values())
        calls = "1 agent call" if self.agent_calls == 1 else f"{self.agent_calls:,} agent calls"
        return f"{cost} · {tokens:,} tokens · {calls}"

    def cost_text(self) -> str:
        """The cost alone, for a table cell: ``$0.0520``, ``—`` without calls, ``not reported``."""
        if not self.agent_calls:
            return "—"
        return f"${self.cost_usd:.4f}" if self.cost_usd is not None else "not reported"

    def as_dict(self) -> dict[str, Any]:
        return {"agent_calls": self.agent_calls, "cost_usd": self.cost_usd, "usage": self.usage,
                "num_turns": self.num_turns, "tool_calls": self.tool_calls}


def _sums() -> dict[str, Any]:
    return {name: Sum(name) for name in (*COUNT_FIELDS, "cost_usd")}


def _spend(row: dict[str, Any]) -> Spend:
    return Spend(
        agent_calls=row["agent_calls"] or 0, cost_usd=row["cost_usd"],
        usage={name: row[name] or 0 for name in TOKEN_FIELDS}, num_turns=row["num_turns"] or 0,
        tool_calls=row["tool_calls"] or 0,
    )


def spend_of(executions: QuerySet[WorkNodeExecution]) -> Spend:
    """The total of ``executions`` (every attempt, planning and judge calls included), in one query."""
    return _spend(executions.aggregate(**_sums()))


def spend_by_org_node(executions: QuerySet[WorkNodeExecution]) -> dict[str, Spend]:
    """The total of ``executions`` per org node that ran or planned them, in one query."""
    return dict(sorted(_spend_grouped(executions, "subagent_type").items()))


def spend_by_run(executions: QuerySet[WorkNodeExecution]) -> dict[Any, Spend]:
    """The total of ``executions`` per run, in one query."""
    return _spend_grouped(executions, "run_id")


def spend_by_task(executions: QuerySet[WorkNodeExecution]) -> dict[Any, Spend]:
    """The total of ``executions`` per task (every run of it), in one query."""
    return _spend_grouped(executions, "run__task_id")


def spend_by_project(executions: QuerySet[WorkNodeExecution]) -> dict[Any, Spend]:
    """The total of ``executions`` per project, in one query."""
    return _spend_grouped(executions, "run__task__project_id")


def _spend_grouped(executions: QuerySet[WorkNodeExecution], key: str) -> dict[Any, Spend]:
    rows = executions.order_by().values(key).annotate(**_sums())
    return {row[key]: _spend(row) for row in rows}


NO_SPEND = Spend(agent_calls=0, cost_usd=None, usage=dict.fromkeys(TOKEN_FIELDS, 0), num_turns=0, tool_calls=0)
