"""The spans of one attempt and of one run, as plain values, from the records the engine keeps.

An attempt's span holds its agent calls (the GenAI conventions' ``invoke_agent`` or ``chat`` spans),
their tool calls (``execute_tool``) and its commands, each told apart by the attempt's log lines:
``agent_call`` starts a call (a planning attempt's one call starts with the attempt), ``agent_init`` and
``agent_result`` name its model, session and usage, ``tool_call``/``tool_result`` bound a tool call,
``command_start``/``command_exit`` a command. Times are the lines' own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from graphs.domain.runners import CHAT_RUNNERS, RUNNER_PROVIDERS
from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from graphs.telemetry.content import ContentPolicy
from graphs.telemetry.ids import span_id_of

# The log events a trace is made of: the rest (agent output, heartbeats of text) is left in the log.
TRACE_EVENTS = ("agent_call", "agent_init", "agent_result", "agent_error", "tool_call", "tool_result",
                "command_start", "command_exit")


@dataclass
class SpanSpec:
    """One span: ids are 64-bit integers, ``error`` a description when the span failed."""

    name: str
    span_id: int
    parent_id: int | None
    start: datetime
    end: datetime
    attributes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    client: bool = False

    def set(self, name: str, value: Any) -> None:
        """Set an attribute unless the value is unknown (OpenTelemetry has no null)."""
        if value is None or value == "":
            return
        self.attributes[name] = float(value) if isinstance(value, Decimal) else value


def run_span(run: WorkGraphRun, *, task_title: str, project: str) -> SpanSpec:
    """The run's root span: its whole life, from its creation to its end."""
    span = SpanSpec(name=f"run {task_title}"[:200], span_id=span_id_of("run", run.pk), parent_id=None,
                    start=run.created_at, end=max(run.finished_at or run.created_at, run.created_at))
    for name, value in (("workgraph.run.id", str(run.pk)), ("workgraph.run.status", run.status),
                        ("workgraph.task.id", str(run.task_id)), ("workgraph.project", project),
                        ("workgraph.run.error_code", run.error_code)):
        span.set(name, value)
    if run.ended_unsuccessfully():
        span.error = run.error or run.status
    return span


def attempt_spans(
    execution: WorkNodeExecution, *, lines: list[dict[str, Any]], runner: str, content: ContentPolicy
) -> list[SpanSpec]:
    """The attempt's span and its children, from its row and its trace lines (``TRACE_EVENTS``, in order)."""
    start = execution.started_at or execution.created_at
    last_seen = max([start, *(_ts(line) for line in lines)])
    end = max(execution.finished_at or last_seen, start)
    planning = execution.node_id.startswith(PLANNING_NODE_ID)
    name = f"plan {execution.subagent_type or 'run'}" if planning else f"node {execution.node_id}"
    attempt = SpanSpec(name=name, span_id=span_id_of("attempt", execution.pk),
                       parent_id=span_id_of("run", execution.run_id), start=start, end=end)
    judgment = execution.judgment_result or {}
    for key, value in (
        ("workgraph.node.id", execution.node_id), ("workgraph.attempt", execution.attempt),
        ("workgraph.attempt.status", execution.status), ("workgraph.attempt.cause", execution.cause),
        ("workgraph.org_node", execution.subagent_type), ("workgraph.judgment.ok", judgment.get("ok")),
        ("workgraph.judgment.kind", judgment.get("kind")),
        ("workgraph.failure.category", (execution.failure or {}).get("category")),
        ("workgraph.cost_usd", execution.cost_usd), ("workgraph.agent_calls", execution.agent_calls),
    ):
        attempt.set(key, value)
    if execution.ended_unsuccessfully():
        attempt.error = execution.error or execution.status
    builder = _Children(execution, attempt=attempt, runner=runner, content=content, planning=planning)
    for line in lines:
        builder.line(line)
    return [attempt, *builder.finish()]


class _Children:
    """Walks an attempt's trace lines once, opening and closing its calls, tools and commands."""

    def __init__(self, execution: WorkNodeExecution, *, attempt: SpanSpec, runner: str, content: ContentPolicy,
                 planning: bool) -> None:
        self.execution, self.attempt, self.runner, self.content = execution, attempt, runner, content
        self.planning = planning
        self.calls: list[SpanSpec] = []
        self.call: SpanSpec | None = None
        self.tools: dict[str, SpanSpec] = {}
        self.commands: list[SpanSpec] = []
        self.command: SpanSpec | None = None
        self.done: list[SpanSpec] = []

    def line(self, line: dict[str, Any]) -> None:
        event, at = line.get("event"), _ts(line)
        if event == "agent_call":
            self._call_open(at, purpose=line.get("purpose"), org_node=line.get("org_node"))
        elif event in {"agent_init", "agent_result", "agent_error", "tool_call", "tool_result"}:
            if self.call is None:
                self._call_open(self.attempt.start, purpose="planning" if self.planning else line.get("purpose"),
                                org_node=self.execution.subagent_type)
            self._call_line(event, line, at)
        elif event == "command_start":
            self.command = SpanSpec(name=f"command {line.get('purpose') or 'node'}",
                                    span_id=span_id_of("command", self.execution.pk, line.get("seq")),
                                    parent_id=self.attempt.span_id, start=at, end=at)
            self.commands.append(self.command)
        elif event == "command_exit" and self.command is not None:
            self.command.end = at
            self.command.set("process.exit.code", line.get("exit_code"))
            self.command.set("workgraph.command.timed_out", line.get("timed_out"))
            self.command.set("workgraph.command.duration_ms", line.get("duration_ms"))
            if line.get("timed_out") or line.get("exit_code") not in (0, None):
                self.command.error = "timed out" if line.get("timed_out") else f"exit code {line.get('exit_code')}"
            self.command = None

    def _call_open(self, at: datetime, *, purpose: Any, org_node: Any) -> None:
        self._call_close(at)
        chat = self.runner in CHAT_RUNNERS
        agent = str(org_node or self.execution.subagent_type or "worker")
        call = SpanSpec(name=f"chat {self.execution.model or self.runner}" if chat else f"invoke_agent {agent}",
                        span_id=span_id_of("call", self.execution.pk, len(self.calls)),
                        parent_id=self.attempt.span_id, start=at, end=at, client=True)
        call.set("gen_ai.operation.name", "chat" if chat else "invoke_agent")
        call.set("gen_ai.provider.name", RUNNER_PROVIDERS.get(self.runner, self.runner))
        call.set("gen_ai.agent.name", agent)
        call.set("gen_ai.request.model", self.execution.model)
        call.set("workgraph.call.purpose", purpose)
        # Only a captured prompt and answer are read: unless content is captured they are not even loaded.
        if self.content.capture and purpose in {"node", "planning", None}:
            call.set("gen_ai.input.messages", self.content.messages("user", self.execution.input_payload.get("prompt")))
            call.set("gen_ai.output.messages",
                     self.content.messages("assistant", (self.execution.output_payload or {}).get("text")))
        self.calls.append(call)
        self.call = call

    def _call_line(self, event: str, line: dict[str, Any], at: datetime) -> None:
        call = self.call
        assert call is not None
        call.end = max(call.end, at)
        if event in {"agent_init", "agent_result"} and line.get("model"):
            call.set("gen_ai.response.model", line["model"])
            call.attributes.setdefault("gen_ai.request.model", line["model"])
        call.set("gen_ai.conversation.id", line.get("session_id"))
        if event == "agent_result":
            usage = line.get("usage") or {}
            call.set("gen_ai.usage.input_tokens", usage.get("input_tokens"))
            call.set("gen_ai.usage.output_tokens", usage.get("output_tokens"))
            call.set("workgraph.cost_usd", line.get("total_cost_usd"))
            if line.get("is_error"):
                call.error = str(line.get("subtype") or "the agent reported an error")
            self._call_close(at)
        elif event == "agent_error":
            call.error = str(line.get("message") or line.get("kind") or "agent error")
            self._call_close(at)
        elif event == "tool_call":
            tool = SpanSpec(name=f"execute_tool {line.get('name') or 'tool'}",
                            span_id=span_id_of("tool", self.execution.pk, line.get("seq")),
                            parent_id=call.span_id, start=at, end=at)
            tool.set("gen_ai.operation.name", "execute_tool")
            tool.set("gen_ai.tool.name", line.get("name"))
            tool.set("gen_ai.tool.call.id", line.get("tool_use_id"))
            tool.set("gen_ai.tool.call.arguments", self.content.text(line.get("input")))
            self.tools[str(line.get("tool_use_id"))] = tool
            self.done.append(tool)
        elif event == "tool_result":
            tool = self.tools.pop(str(line.get("tool_use_id")), None)
            if tool is not None:
                tool.end = at
                tool.set("gen_ai.tool.call.result", self.content.text(line.get("content")))
                if line.get("is_error"):
                    tool.error = "the tool reported an error"

    def _call_close(self, at: datetime) -> None:
        if self.call is None:
            return
        self.call.end = max(self.call.end, at)
        for tool in self.tools.values():
            tool.end = max(tool.end, self.call.end)
        self.tools.clear()
        self.call = None

    def finish(self) -> list[SpanSpec]:
        self._call_close(self.attempt.end)
        self._usage_from_row()
        for command in self.commands:
            command.end = max(command.end, command.start)
        return [*self.calls, *self.done, *self.commands]

    def _usage_from_row(self) -> None:
        """The attempt's row counts the tokens of all its calls: a lone call that logged none has them."""
        if len(self.calls) != 1 or "gen_ai.usage.input_tokens" in self.calls[0].attributes:
            return
        if self.execution.calls_without_usage < self.execution.agent_calls:
            self.calls[0].set("gen_ai.usage.input_tokens", self.execution.input_tokens)
            self.calls[0].set("gen_ai.usage.output_tokens", self.execution.output_tokens)
        self.calls[0].set("gen_ai.response.model", self.execution.model)


def _ts(line: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(str(line["ts"]).replace("Z", "+00:00"))
