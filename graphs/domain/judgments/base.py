"""What a judgment kind is made of, what its judge is given and what it returns.

Nothing here imports the engine: graphs.domain.manifest_nodes validates with the kinds, and the engine runs
their judges, giving each what it may not do itself (ask an agent, run a command) through its request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Judgment:
    ok: bool
    kind: str
    issues: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "kind": self.kind, "issues": self.issues, **self.detail}


class CommandOutcome(Protocol):
    """How a command the engine ran ended, as a judge reads it (graphs.workspaces.command_process' result is one).
    ``exit_code`` is None when it never ran to its end; ``output`` is its output's last bytes."""

    @property
    def argv(self) -> tuple[str, ...]: ...

    @property
    def exit_code(self) -> int | None: ...

    @property
    def duration_ms(self) -> int: ...

    @property
    def timeout(self) -> float: ...

    @property
    def output(self) -> str: ...

    @property
    def timed_out(self) -> bool: ...

    @property
    def start_error(self) -> str | None: ...


class JudgeRequest(Protocol):
    """What a judge is given: the node it judges (``spec`` is the node's ``judgment`` object) and the
    output of one of its attempts, and what it may ask of the engine, which does both in the attempt's
    folder, on the attempt's log and under the run's cancel."""

    @property
    def node(self) -> dict: ...

    @property
    def spec(self) -> dict: ...

    @property
    def content(self) -> str: ...

    def ask(self, prompt: str) -> str:
        """The answer of an agent asked ``prompt`` (the node's agent, accounted as a judge call)."""
        ...

    def command_run(self, argv: list[str], *, timeout_seconds: int | None) -> CommandOutcome:
        """How ``argv`` ended, run in the attempt's folder (None: the console's default timeout)."""
        ...


Judge = Callable[[JudgeRequest], Judgment]
# The problems of a node's ``judgment`` object, each line starting with ``label`` (which names the node).
SpecErrors = Callable[[Mapping[str, Any], str], list[str]]


def no_errors(spec: Mapping[str, Any], label: str) -> list[str]:
    return []


@dataclass(frozen=True)
class JudgmentKind:
    """One kind of judgment a node may declare (``judgment: {"kind": <name>, ...}``): what the manifest
    requires of it, how the engine judges with it, and what planning prompts say of it."""

    name: str
    errors: SpecErrors
    judge: Judge
    # One line of the planning prompt's judgment rules: the kind's JSON shape, then what it does.
    prompt_rule: Callable[[], str]
    # An external node's report is judged within the request that brings it, so only a kind whose judge
    # calls no agent and runs no program may judge one; ``external_errors`` adds what else it requires then.
    external: bool = False
    external_errors: SpecErrors = no_errors
    # The judge may take minutes (an agent call, a program): the attempt's prompt is stored before it runs,
    # so the node's page shows it meanwhile.
    slow: bool = False
    # The judgment runs the argv in its ``command`` field (with its ``timeout_seconds``): only in projects
    # that allow commands, and planning prompts offer the kind only there.
    runs_command: bool = False
