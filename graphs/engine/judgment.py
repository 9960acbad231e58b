"""Judging an attempt's output with the judge of its node's judgment kind (graphs.domain.judgments).

A kind's judge asks the engine for what it may not do itself, an agent's answer or a command's run,
through the ``AttemptJudgeRequest`` it is given: the call is accounted and logged on the attempt, in
its folder, under the run's cancel. A command node's exit code is judged before its judgment, if it
has one, and so is the shape of a node's test case manifest. A validator's test_script node, once its
judgment passed, has its script saved in its folder and run there, and the script's exit code decides.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path

from graphs.agents import AgentRunner
from graphs.domain.case_manifests import TEST_CASE_MANIFEST
from graphs.domain.check_registry import check_run
from graphs.domain.judgments import DEFAULT_JUDGMENT_KIND, Judgment, judgment_kind
from graphs.domain.judgments.command import command_exit_judgment, validator_script_command
from graphs.domain.mechanical_checks import script_source
from graphs.engine.attempt_commands import attempt_command_run, validator_script_refusal, validator_script_save
from graphs.engine.calls import attempt_agent_call
from graphs.logs.store import log_append
from graphs.models import WorkNodeExecution
from graphs.workspaces.command_process import CommandResult


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
    must not pass unjudged. A validator's test script then runs (``_validator_script_judgment``).
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
    org_node = request.execution.subagent_type or request.node.get("subagent_type", "")
    script = validator_script_command(request.node, org_node=org_node, manifest=request.execution.run.graph_manifest)
    if judgment.ok and script is not None:
        judgment = _validator_script_judgment(request, script, judged=judgment)
    log_append(execution=request.execution, event="judgment", **judgment.as_dict())
    return judgment


def _validator_script_judgment(request: AttemptJudgeRequest, argv: list[str], *, judged: Judgment) -> Judgment:
    """The passed judgment ``judged`` of a validator's test_script node, completed by running its script
    (``argv``): saved in the attempt's folder from the output, its exit code decides and a failure's issue
    ends with what it printed. Where the project allows no commands, ``judged`` stands with an issue
    saying the script did not run: the node says so rather than passing as if it had run."""
    if not request.execution.run.task.project.allow_commands:
        return replace(judged, issues=[*judged.issues, validator_script_refusal(argv)])
    file = argv[-1]
    try:
        validator_script_save(request.cwd, file=file, source=script_source(request.content))
    except OSError as error:
        return Judgment(ok=False, kind="command", issues=[f"the test script could not be saved as {file}: {error}"],
                        detail={**judged.detail, "command": argv})
    exited = command_exit_judgment(request.command_run(argv, timeout_seconds=None), expect_exit=0)
    return replace(exited, detail={**judged.detail, **exited.detail})
