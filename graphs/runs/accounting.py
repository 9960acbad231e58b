"""What agent calls cost: each call's usage added to its attempt, and totals per run and task.

Every call an attempt makes — its node call, its judge, a planning call and its repair — adds to the
attempt's counts in memory, and the attempt's result writes them with everything else (no query of
its own). Totals are sums in the database, one query each, however many attempts there are.

What a call does not report is unknown, never 0: ``calls_without_usage`` / ``calls_without_cost`` count
the calls that did not report usage or cost; an attempt's tokens read as unknown (null in the API, "—"
on the pages) when none of its calls reported usage (``tokens_known``), its cost is empty when none
reported a cost. A total over calls some of which reported nothing
is a lower bound, and reads "at least"; over calls none of which did, it reads as unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import F, QuerySet, Sum, Value
from django.db.models.functions import Coalesce

from graphs.agents import AgentResult
from graphs.agents.base import TOKEN_FIELDS, token_counts
from graphs.domain.money_words import usd_text
from graphs.metrics.counters import agent_call_count
from graphs.models import WorkGraphRun, WorkNodeExecution

COUNT_FIELDS = (*TOKEN_FIELDS, "agent_calls", "num_turns", "tool_calls", "duration_api_ms", "calls_without_usage",
                "calls_without_cost")
# Written with the attempt's result like its costs, though no total sums them: its failed tool calls.
TOOL_FAILURE_FIELDS = ("tool_failures", "tool_failure_first")
ACCOUNTING_FIELDS = (*COUNT_FIELDS, *TOOL_FAILURE_FIELDS, "cost_usd", "model", "session_id")
# What a new attempt starts with: the scheduler builds attempts in memory from these.
ACCOUNTING_DEFAULTS: dict[str, Any] = {**dict.fromkeys(COUNT_FIELDS, 0), "tool_failures": 0,
                                       "tool_failure_first": "", "cost_usd": None, "model": "", "session_id": ""}


def call_account(execution: WorkNodeExecution, result: AgentResult) -> None:
    """Add one finished call's usage and cost to its attempt, in memory (its result writes them)."""
    if result.usage is None:
        execution.calls_without_usage += 1
    for name, value in token_counts(result.usage).items():
        setattr(execution, name, getattr(execution, name) + value)
    execution.agent_calls += 1
    execution.num_turns += result.num_turns or 0
    execution.tool_calls += result.tool_calls or 0
    execution.tool_failures += result.tool_failures or 0
    execution.tool_failure_first = execution.tool_failure_first or result.tool_failure_first
    execution.duration_api_ms += result.duration_api_ms or 0
    if result.cost_usd is not None:
        cost = Decimal(str(result.cost_usd))
        execution.cost_usd = (execution.cost_usd or Decimal(0)) + cost
        _run_cost_owe(execution, cost)
    else:
        execution.calls_without_cost += 1
    execution.model = result.model or execution.model
    execution.session_id = result.session_id or execution.session_id
    # The attempt's run, task and project are loaded with it wherever a call is made (its cwd and
    # commands come from them), so this reads no row.
    agent_call_count(project=execution.run.task.project.slug, model=result.model or "", cost_usd=result.cost_usd,
                     tokens=token_counts(result.usage) if result.usage is not None else {})


def accounting_of(execution: WorkNodeExecution) -> dict[str, Any]:
    """The attempt's accounting columns, to write with its result."""
    return {name: getattr(execution, name) for name in ACCOUNTING_FIELDS}


# What the attempt's calls cost since its accounting was last written, kept on the attempt in memory
# until ``run_cost_write`` adds it to its run's ``cost_usd``.
_RUN_COST_OWED = "_run_cost_owed"


def _run_cost_owe(execution: WorkNodeExecution, cost: Decimal) -> None:
    run = execution.run
    # A call that cost nothing changes a run's total only while the run has none (an empty sum is no
    # sum): the free calls of a run after its first then cost no statement.
    if cost == 0 and run.cost_usd is not None:
        return
    owed = execution.__dict__.get(_RUN_COST_OWED) or Decimal(0)
    execution.__dict__[_RUN_COST_OWED] = owed + cost


def run_cost_write(execution: WorkNodeExecution) -> None:
    """Add to the attempt's run's ``cost_usd`` what the attempt's calls cost since its accounting was
    last written. Call it once the attempt's accounting is written, in the same transaction: each
    writer of an attempt's cost (its result, a planning call's end, the budget's check after a call)
    does, so the run's total stays the sum of its attempts' without summing them. An increment, not a
    recount: two attempts of a run that end at once each add their own, the row lock ordering them.
    No statement when nothing is owed."""
    owed = execution.__dict__.pop(_RUN_COST_OWED, None)
    if owed is None:
        return
    WorkGraphRun.objects.filter(pk=execution.run_id).update(
        cost_usd=Coalesce(F("cost_usd"), Value(Decimal(0))) + Value(owed))
    execution.run.cost_usd = (execution.run.cost_usd or Decimal(0)) + owed


def tokens_known(attempt: Any) -> bool:
    """Whether an attempt's (or a ``values()`` row's) token counts are known: it made no agent call, or
    at least one of its calls reported usage."""
    get = attempt.get if isinstance(attempt, dict) else lambda name: getattr(attempt, name)
    calls = get("agent_calls") or 0
    return not calls or (get("calls_without_usage") or 0) < calls


def known_tokens(attempt: Any, name: str) -> int | None:
    """One of the attempt's token counts, or None when its tokens are unknown."""
    get = attempt.get if isinstance(attempt, dict) else lambda field: getattr(attempt, field)
    return get(name) if tokens_known(attempt) else None


@dataclass(frozen=True)
class Spend:
    """What a set of attempts cost: calls, tokens, turns and dollars (None when none reported a cost),
    and how many calls reported no usage or no cost (the figures are then lower bounds)."""

    agent_calls: int
    cost_usd: Decimal | None
    usage: dict[str, int]
    num_turns: int
    tool_calls: int
    calls_without_usage: int = 0
    calls_without_cost: int = 0

    @property
    def tokens(self) -> int | None:
        """Every token counted, or None when no call reported usage."""
        if self.agent_calls and self.calls_without_usage >= self.agent_calls:
            return None
        return sum(self.usage.values())

    def summary(self) -> str:
        """One line for a page: ``$0.0520 · 1,344 tokens · 2 agent calls``; ``at least`` before a figure
        some calls did not report, ``cost not reported`` and ``tokens unknown`` when none did."""
        if not self.agent_calls:
            return "no agent calls yet"
        calls = "1 agent call" if self.agent_calls == 1 else f"{self.agent_calls:,} agent calls"
        return f"{self._cost('cost not reported')} · {self._tokens()} · {calls}"

    def cost_text(self) -> str:
        """The cost alone, for a table cell: ``$0.0520``, ``at least $0.0520``, ``—`` without calls,
        ``not reported``."""
        return self._cost("not reported") if self.agent_calls else "—"

    def _cost(self, unknown: str) -> str:
        if self.cost_usd is None:
            return unknown
        return usd_text(self.cost_usd, lower_bound=bool(self.calls_without_cost))

    def _tokens(self) -> str:
        tokens = self.tokens
        if tokens is None:
            return "tokens unknown"
        return f"{'at least ' if self.calls_without_usage else ''}{tokens:,} tokens"

    def as_dict(self) -> dict[str, Any]:
        return {"agent_calls": self.agent_calls, "cost_usd": self.cost_usd, "usage": self.usage,
                "num_turns": self.num_turns, "tool_calls": self.tool_calls,
                "calls_without_usage": self.calls_without_usage, "calls_without_cost": self.calls_without_cost}


def _sums() -> dict[str, Any]:
    return {name: Sum(name) for name in (*COUNT_FIELDS, "cost_usd")}


def _spend(row: dict[str, Any]) -> Spend:
    return Spend(
        agent_calls=row["agent_calls"] or 0, cost_usd=row["cost_usd"],
        usage={name: row[name] or 0 for name in TOKEN_FIELDS}, num_turns=row["num_turns"] or 0,
        tool_calls=row["tool_calls"] or 0, calls_without_usage=row["calls_without_usage"] or 0,
        calls_without_cost=row["calls_without_cost"] or 0,
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
