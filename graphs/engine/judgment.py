"""Judging an attempt's output with the judge of its node's judgment kind (graphs.domain.judgments).

A kind's judge asks the engine for what it may not do itself, an agent's answer or a command's run,
through the ``AttemptJudgeRequest`` it is given: the call is accounted and logged on the attempt, in
its folder, under the run's cancel. A command node's exit code is judged before its judgment, if it
has one, and so is the shape of a node's test case manifest.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from graphs.agents import AgentRunner
from graphs.domain.case_manifests import TEST_CASE_MANIFEST
from graphs.domain.checks import check_run
from graphs.domain.judgments import DEFAULT_JUDGMENT_KIND, Judgment, judgment_kind
from graphs.domain.judgments.command import command_exit_judgment
from graphs.engine.calls import attempt_agent_call
from graphs.engine.commands import attempt_command_run
from graphs.logs.store import log_append
from graphs.models import WorkNodeExecution
from graphs.workspaces.commands import CommandResult


@dataclass(frozen=True)
class AttemptJudgeRequest:
    """What a judge is given (graphs.domain.judgments.JudgeRequest): the output (``content``) of ``execution``, an
    attempt of ``node``, and the folder the attempt worked in (``cwd``); for a command node, how its
    command ended (``command``)."""

    runner: AgentRunner
    execution: WorkNodeExecution
    node: dict
    content: str
    cancel_event: threading.Event
    cwd: Path
    command: CommandResult | None = None

    @property
    def spec(self) -> dict:
        return self.node.get("judgment") or {}

    def ask(self, prompt: str) -> str:
        return attempt_agent_call(self.runner, self.execution, node=self.node, prompt=prompt, purpose="judge",
                                  cancel_event=self.cancel_event, cwd=self.cwd).text

    def command_run(self, argv: list[str], *, timeout_seconds: int | None) -> CommandResult:
        return attempt_command_run(self.execution, argv=argv, timeout_seconds=timeout_seconds, purpose="judge",
                                   cwd=self.cwd, cancel_event=self.cancel_event)


def _artifact_shape_judgment(request: AttemptJudgeRequest) -> Judgment | None:
    """A node that produces a test case manifest (its ``artifact_type``, or the artifact it promotes to)
    has its output checked against the manifest's schema before its own judgment; None for other nodes."""
    promoted = (request.node.get("promotes_to_artifact") or {}).get("artifact_type")
    if TEST_CASE_MANIFEST not in (request.node.get("artifact_type"), promoted):
        return None
    result = check_run("test_case_manifest_valid", request.content)
    return Judgment(ok=result.ok, kind="mechanical", issues=result.issues,
                    detail={"check_ref": "test_case_manifest_valid"})


def judgment_run(request: AttemptJudgeRequest) -> Judgment:
    """Judge the output with the judge of the node's kind, and log the judgment.

    A command node is judged by its exit code first (kind ``command``), and a node producing a test case
    manifest by its schema (``test_case_manifest_valid``), then by its own judgment if it has one.
    A kind nothing registers fails the output: a manifest validated against another version of the kinds
    must not pass unjudged.
    """
    name = request.spec.get("kind", DEFAULT_JUDGMENT_KIND)
    kind = judgment_kind(name)
    exited = None
    if request.command is not None:
        exited = command_exit_judgment(request.command, expect_exit=request.node.get("expect_exit", 0))
    shaped = _artifact_shape_judgment(request)
    if exited is not None and not exited.ok:
        judgment = exited
    elif shaped is not None and not shaped.ok:
        judgment = shaped
    elif name == DEFAULT_JUDGMENT_KIND and (exited or shaped):
        judgment = exited or shaped
    elif kind is None:
        judgment = Judgment(ok=False, kind=str(name), issues=[f"no judge for judgment kind {name!r}"])
    else:
        judgment = kind.judge(request)
    log_append(execution=request.execution, event="judgment", **judgment.as_dict())
    return judgment
