"""``command``: after the node's answer, a program runs in the attempt's folder, and exit 0 passes.

A command node's own exit code is judged the same way (``command_exit_judgment``), before its judgment,
and so is a validator's test script (``validator_script_command``), after its judgment.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from graphs.domain.judgments.base import CommandOutcome, JudgeRequest, Judgment, JudgmentKind
from graphs.domain.manifest_fields import command_errors, timeout_errors

# The org nodes whose ``test_script`` node has its script run as the end of its judgment: the validator's
# catalog promises the script is executed against the repository, so it must not pass unrun.
SCRIPT_RUNNING_ORG_NODES = frozenset({"validator"})
TEST_SCRIPT_NODE_TYPE = "test_script"
# The command node type the validator's command catalog offers to run a test script.
RUN_TEST_SCRIPT_NODE_TYPE = "run_test_script"
_NOT_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9_.-]")

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


def validator_script_file(node_id: str) -> str:
    """The file a test_script node's script is saved as in its attempt's folder, ``<node_id>.py``: a
    plain file name, each character that could make it a path (or a hidden file) replaced by ``_``."""
    return _NOT_IN_FILE_NAME.sub("_", node_id).lstrip(".") + ".py"


def validator_script_command(
    node: Mapping[str, Any], *, org_node: str, manifest: Mapping[str, Any]
) -> list[str] | None:
    """The command that runs the script of ``node``, an agent's ``test_script`` node planned by
    ``org_node`` in ``manifest``, once its own judgment passed: ``python3 <node_id>.py``. None for any
    other node, or when the manifest runs that script already — a ``run_test_script`` node depending on
    ``node``, or any command naming its file — so it never runs twice."""
    # A command node has no script to save, and an external node's report is judged within its request.
    agents = "command" not in node and node.get("executor", "agent") == "agent"
    if node.get("node_type") != TEST_SCRIPT_NODE_TYPE or org_node not in SCRIPT_RUNNING_ORG_NODES or not agents:
        return None
    file = validator_script_file(str(node.get("node_id", "")))
    named = re.compile(rf"(?<![\w.-]){re.escape(file)}(?![\w.-])")
    for other in manifest.get("nodes") or []:
        if not isinstance(other, Mapping):
            continue
        judgment = other.get("judgment")
        commands = [other.get("command"), judgment.get("command") if isinstance(judgment, Mapping) else None]
        runner = other.get("node_type") == RUN_TEST_SCRIPT_NODE_TYPE and node.get("node_id") in (
            other.get("depends_on") or [])
        if runner or any(isinstance(argv, list) and any(named.search(str(arg)) for arg in argv) for argv in commands):
            return None
    return ["python3", file]
