"""The commands an attempt runs — a command node's own, a command judgment's and a validator's test
script — in its working folder.

Commands run only in projects with ``allow_commands``; ``commands_refusal`` says why an attempt may not
run its node's, and ``validator_script_refusal`` why a validator's test script did not run. Each
command's output streams into the attempt's log as ``command_output`` lines, between a
``command_start`` and a ``command_exit`` line, each marked with the command's purpose (``node`` or
``judge``).
"""

from __future__ import annotations

import os
import shlex
import threading
from pathlib import Path
from typing import Any

from django.conf import settings

from graphs.agents import AgentCancelled
from graphs.domain.manifest_nodes import node_commands
from graphs.logs.store import log_append
from graphs.models import WorkNodeExecution
from graphs.workspaces.command_process import CommandResult, command_run
from graphs.workspaces.libgit import folder_touched
from graphs.workspaces.sandbox import process_env


def commands_refusal(node: dict, *, allowed: bool) -> str | None:
    """Why the attempt of ``node`` may not run: it runs commands (its own or its judgment's) and its
    project does not allow them. None when it runs none, or may."""
    commands = node_commands(node)
    if allowed or not commands:
        return None
    return _refusal(", ".join(f"{shlex.join(argv)} (as its {runs_as})" for runs_as, argv in commands))


def validator_script_refusal(argv: list[str]) -> str:
    """What a validator's test_script node says when its project does not allow its script to run."""
    return _refusal(f"{shlex.join(argv)} (its test script)")


def _refusal(listed: str) -> str:
    return (
        f"the project does not allow commands, so {listed} did not run; a project admin can turn on "
        "allow_commands for the project"
    )


def validator_script_save(cwd: Path, *, file: str, source: str) -> None:
    """Save ``source`` as ``file`` in ``cwd``, ending with a newline, replacing what is there. Whatever the
    agent left under that name is removed first, never followed: a symlink there must not lead the write
    out of the folder. Raises OSError when it cannot be saved."""
    folder_touched(cwd)
    path = cwd / file
    path.unlink(missing_ok=True)
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(handle, "w", encoding="utf-8") as script:
        script.write(source if source.endswith("\n") else f"{source}\n")


def attempt_command_run(
    execution: WorkNodeExecution,
    *,
    argv: list[str],
    timeout_seconds: int | None,
    purpose: str,
    cwd: Path,
    cancel_event: threading.Event,
) -> CommandResult:
    """Run one command of the attempt in ``cwd`` (the attempt's workspace), its output streaming into the
    attempt's log, and return how it ended. Raises AgentCancelled when the run's cancel stopped it, so
    the attempt ends cancelled as one whose agent was stopped does."""
    timeout = timeout_seconds or settings.WORKGRAPH_COMMAND_TIMEOUT
    folder_touched(cwd)
    log_append(execution=execution, event="command_start", purpose=purpose, argv=argv, cwd=str(cwd),
               timeout_seconds=timeout)
    result = command_run(
        argv, cwd=cwd, timeout=timeout, cancel_event=cancel_event,
        env=process_env(settings.WORKGRAPH_COMMAND_ENV),
        network=execution.run.task.project.allow_command_network,
        output_max_bytes=settings.WORKGRAPH_COMMAND_OUTPUT_MAX_BYTES,
        on_output=lambda stream, text: log_append(execution=execution, event="command_output", purpose=purpose,
                                                  stream=stream, text=text),
    )
    log_append(execution=execution, event="command_exit", purpose=purpose, exit_code=result.exit_code,
               duration_ms=result.duration_ms, timed_out=result.timed_out, output_dropped_bytes=result.dropped_bytes,
               **({"start_error": result.start_error} if result.start_error else {}))
    if result.cancelled:
        raise AgentCancelled("the command was stopped: its run was cancelled")
    return result


def command_output_fields(result: CommandResult) -> dict[str, Any]:
    """A command node's output payload beside its ``text`` (the output's tail): how the command ended."""
    return {"usage": None, "exit_code": result.exit_code, "duration_ms": result.duration_ms,
            "timed_out": result.timed_out, "output_dropped_bytes": result.dropped_bytes}
