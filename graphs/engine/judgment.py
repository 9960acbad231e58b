"""Judging an attempt's output: one judge per judgment kind the manifest accepts.

``JUDGES`` maps each kind of ``graphs.manifest.JUDGMENT_KINDS`` to its judge; ``judges_check`` runs at
start-up, so a kind the manifest accepts but nothing judges stops the process instead of letting
every output of that kind pass. A command node's exit code is judged before its judgment, if it has one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from graphs.agents import AgentRunner
from graphs.case_manifests import TEST_CASE_MANIFEST
from graphs.checks import check_run
from graphs.commands import CommandResult
from graphs.engine.calls import attempt_agent_call
from graphs.engine.commands import attempt_command_run, command_failure
from graphs.json_extraction import extract_json_payload
from graphs.logs import log_append
from graphs.manifest import JUDGMENT_KINDS
from graphs.models import WorkNodeExecution
from graphs.prompts import judge_prompt


@dataclass(frozen=True)
class Judgment:
    ok: bool
    kind: str
    issues: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "kind": self.kind, "issues": self.issues, **self.detail}


@dataclass(frozen=True)
class JudgeRequest:
    """What a judge is given: the output (``content``) of ``execution``, an attempt of ``node``, and the
    folder the attempt worked in (``cwd``); for a command node, how its command ended (``command``)."""

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


Judge = Callable[[JudgeRequest], Judgment]


def _judge_none(request: JudgeRequest) -> Judgment:
    return Judgment(ok=True, kind="none")


def _judge_mechanical(request: JudgeRequest) -> Judgment:
    check_ref = request.spec.get("check_ref", "")
    result = check_run(check_ref, request.content)
    return Judgment(ok=result.ok, kind="mechanical", issues=result.issues, detail={"check_ref": check_ref})


def _judge_llm(request: JudgeRequest) -> Judgment:
    prompt = judge_prompt(judge_prompt_template=request.spec.get("judge_prompt", "{content}"), content=request.content)
    answer = attempt_agent_call(request.runner, request.execution, node=request.node, prompt=prompt,
                                purpose="judge", cancel_event=request.cancel_event, cwd=request.cwd).text
    verdict = extract_json_payload(answer, required_keys=("ok",))
    if verdict is None or not isinstance(verdict.get("ok"), bool):
        return Judgment(ok=False, kind="llm", issues=["the judge's answer held no {ok, issues} JSON object"],
                        detail={"judge_answer": answer[:4000]})
    issues = [str(issue) for issue in verdict.get("issues") or [] if str(issue).strip()]
    return Judgment(ok=verdict["ok"], kind="llm", issues=issues)


def _judge_command(request: JudgeRequest) -> Judgment:
    """Run the judgment's command after the node's answer, in the attempt's folder: it passes on exit 0."""
    result = attempt_command_run(request.execution, argv=list(request.spec.get("command") or []),
                                 timeout_seconds=request.spec.get("timeout_seconds"), purpose="judge",
                                 cwd=request.cwd, cancel_event=request.cancel_event)
    return command_exit_judgment(result, expect_exit=0)


def command_exit_judgment(result: CommandResult, *, expect_exit: int) -> Judgment:
    """Whether a command exited with ``expect_exit``; when not, the issue ends with its output's tail."""
    failure = command_failure(result, expect_exit=expect_exit)
    return Judgment(ok=failure is None, kind="command", issues=[failure] if failure else [], detail={
        "command": list(result.argv), "exit_code": result.exit_code, "expect_exit": expect_exit,
        "duration_ms": result.duration_ms, "timed_out": result.timed_out,
    })


JUDGES: dict[str, Judge] = {
    "none": _judge_none, "mechanical": _judge_mechanical, "llm": _judge_llm, "command": _judge_command,
}


def judges_check(kinds: Iterable[str] = JUDGMENT_KINDS) -> None:
    """Raise ``ImproperlyConfigured`` naming every judgment kind in ``kinds`` that has no judge."""
    missing = [kind for kind in kinds if kind not in JUDGES]
    if missing:
        raise ImproperlyConfigured(
            f"no judge for judgment kind {', '.join(map(repr, missing))}: every kind a manifest may use needs one"
            f" (judges: {', '.join(sorted(JUDGES))})"
        )


def _artifact_shape_judgment(request: JudgeRequest) -> Judgment | None:
    """A node that produces a test case manifest (its ``artifact_type``, or the artifact it promotes to)
    has its output checked against the manifest's schema before its own judgment; None for other nodes."""
    promoted = (request.node.get("promotes_to_artifact") or {}).get("artifact_type")
    if TEST_CASE_MANIFEST not in (request.node.get("artifact_type"), promoted):
        return None
    result = check_run("test_case_manifest_valid", request.content)
    return Judgment(ok=result.ok, kind="mechanical", issues=result.issues,
                    detail={"check_ref": "test_case_manifest_valid"})


def judgment_run(request: JudgeRequest) -> Judgment:
    """Judge the output with the judge of the node's kind, and log the judgment.

    A command node is judged by its exit code first (kind ``command``), and a node producing a test case
    manifest by its schema (``test_case_manifest_valid``), then by its own judgment if it has one.
    A kind with no judge fails the output: a manifest validated against another version of the kinds
    must not pass unjudged.
    """
    kind = request.spec.get("kind", "none")
    judge = JUDGES.get(kind)
    exited = None
    if request.command is not None:
        exited = command_exit_judgment(request.command, expect_exit=request.node.get("expect_exit", 0))
    shaped = _artifact_shape_judgment(request)
    if exited is not None and not exited.ok:
        judgment = exited
    elif shaped is not None and not shaped.ok:
        judgment = shaped
    elif kind == "none" and (exited or shaped):
        judgment = exited or shaped
    elif judge is None:
        judgment = Judgment(ok=False, kind=str(kind), issues=[f"no judge for judgment kind {kind!r}"])
    else:
        judgment = judge(request)
    log_append(execution=request.execution, event="judgment", **judgment.as_dict())
    return judgment
