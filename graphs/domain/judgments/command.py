"""``command``: after the node's answer, a program runs in the attempt's folder, and exit 0 passes.

A command node's own exit code is judged the same way (``command_exit_judgment``), before its judgment.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from graphs.domain.judgments.base import CommandOutcome, JudgeRequest, Judgment, JudgmentKind
from graphs.domain.manifest_fields import command_errors, timeout_errors

# How much of a failed command's output its judgment's issues quote: what a retry or a loop-back's
# rerun node is given as feedback, in every prompt it reaches.
ISSUE_OUTPUT_CHARS = 4000


def _errors(spec: Mapping[str, Any], label: str) -> list[str]:
    return [*command_errors(spec.get("command"), f"{label}: judgment.command"),
            *timeout_errors(spec.get("timeout_seconds"), f"{label}: judgment.timeout_seconds")]


def _judge(request: JudgeRequest) -> Judgment:
    result = request.command_run(list(request.spec.get("command") or []),
                                 timeout_seconds=request.spec.get("timeout_seconds"))
    return command_exit_judgment(result, expect_exit=0)


def command_exit_judgment(result: CommandOutcome, *, expect_exit: int) -> Judgment:
    """Whether a command exited with ``expect_exit``; when not, the issue ends with its output's tail."""
    failure = command_failure(result, expect_exit=expect_exit)
    return Judgment(ok=failure is None, kind="command", issues=[failure] if failure else [], detail={
        "command": list(result.argv), "exit_code": result.exit_code, "expect_exit": expect_exit,
        "duration_ms": result.duration_ms, "timed_out": result.timed_out,
    })


def command_failure(result: CommandOutcome, *, expect_exit: int) -> str | None:
    """What went wrong with the command, as a judgment's issue ending with its output's tail; None when
    it exited with ``expect_exit``."""
    command = shlex.join(result.argv)
    if result.start_error is not None:
        return f"`{command}` did not run: {result.start_error}"
    if result.timed_out:
        what = f"`{command}` timed out after {result.timeout:g} s and was killed"
    elif result.exit_code != expect_exit:
        what = f"`{command}` exited with code {result.exit_code} (expected {expect_exit})"
    else:
        return None
    output = result.output[-ISSUE_OUTPUT_CHARS:]
    return f"{what}. The end of its output:\n{output}" if output.strip() else f"{what}; it printed nothing."


def _prompt_rule() -> str:
    return (
        '{"kind": "command", "command": ["<program>", "<argument>", ...], "timeout_seconds": 600}: after the '
        "node's agent answers, the engine runs the command in the same working folder; a non-zero exit "
        "fails the judgment, with the end of the command's output as the issues."
    )


KIND = JudgmentKind(name="command", errors=_errors, judge=_judge, prompt_rule=_prompt_rule, slow=True,
                    runs_command=True)
