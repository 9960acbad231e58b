"""The Claude Code CLI as an agent runner: ``claude --agent <org_node> -p <prompt> --output-format json``.

The CLI prints one JSON object (``result``, ``is_error``, ``usage``) when it finishes. stdout and
stderr are drained on threads so ``on_line`` sees output as it arrives and a full pipe never stalls
the process, while the calling thread polls for exit, the timeout and cancellation.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from django.conf import settings

from graphs.agents.base import AgentCall, AgentCancelled, AgentError, AgentResult, output_head

_POLL_SECONDS = 0.05
# How long the output threads may take to reach end-of-file after the process is gone.
_DRAIN_SECONDS = 2.0

# The CLI reports API trouble as text, in stderr or in the ``result`` of an ``is_error`` payload.
# Classifying it lets the engine retry a rate limit or an overload (transient) and give up at once on
# credentials or an exhausted plan (permanent); anything else stays exit_code / is_error. Quota comes
# first because its messages can also mention a limit.
_HINTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("quota", re.compile(r"credit balance is too low|usage limit reached|insufficient_quota", re.I)),
    ("auth", re.compile(r"invalid api key|/login|authentication_error|oauth token has expired", re.I)),
    ("rate_limit", re.compile(r"\b429\b|rate[ _-]?limit", re.I)),
    ("unavailable", re.compile(r"overloaded|\b529\b|\b503\b|api error: 5\d\d", re.I)),
)


class ClaudeRunner:
    name = "claude"

    def __init__(self, *, bin: str = "claude") -> None:
        self.bin = bin

    def run(self, call: AgentCall) -> AgentResult:
        if call.cancelled():
            raise AgentCancelled()
        if not call.cwd.is_dir():
            raise AgentError(f"the agent's working folder {call.cwd} does not exist", kind="not_found")
        proc = self._start(call)
        stdout: list[str] = []
        stderr: list[str] = []
        readers = [
            _reader(proc.stdout, stdout, call.emit),
            _reader(proc.stderr, stderr, call.emit),
        ]
        deadline = time.monotonic() + call.timeout
        try:
            returncode = _wait(proc, call, deadline)
        except AgentError as exc:
            _kill(proc)
            _join(readers, time.monotonic() + _DRAIN_SECONDS)
            exc.stderr, exc.stdout_head = "".join(stderr), output_head("".join(stdout))
            raise
        if not _join(readers, time.monotonic() + _DRAIN_SECONDS):
            # A leftover child of the CLI still holds the pipes open; it belonged to this call.
            _kill(proc)
            _join(readers, time.monotonic() + _DRAIN_SECONDS)
        return _result(returncode, "".join(stdout), "".join(stderr))

    def _argv(self, call: AgentCall) -> list[str]:
        return [
            self.bin,
            "--agent",
            call.org_node,
            "-p",
            call.prompt,
            "--output-format",
            "json",
            "--permission-mode",
            "auto",
            *tool_limits_argv(call, claude_tools=settings.WORKGRAPH_CLAUDE_TOOLS),
        ]

    def _start(self, call: AgentCall) -> subprocess.Popen[str]:
        try:
            return subprocess.Popen(
                self._argv(call),
                cwd=call.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                # Its own process group, so a timeout or a cancel also stops the tools it spawned.
                start_new_session=True,
            )
        except FileNotFoundError:
            raise AgentError(f"the claude CLI {self.bin!r} was not found", kind="not_found") from None
        except PermissionError:
            raise AgentError(f"the claude CLI {self.bin!r} is not executable", kind="not_found") from None
        except OSError as exc:
            if exc.errno == errno.E2BIG:
                raise AgentError(
                    f"the prompt ({len(call.prompt)} characters) is too long for a command line",
                    kind="bad_request",
                ) from None
            raise


def tool_limits_argv(call: AgentCall, *, claude_tools: dict[str, list[str]]) -> list[str]:
    """The CLI flags that hold a node's call to its ``allowed_tools`` and ``max_tool_iterations``.

    Only node calls of nodes that list their tools are limited (a template-guided plan's nodes); other
    calls keep the agent's own configuration. ``--allowedTools`` merely spares permission prompts, so
    the Claude tools of every registry tool the node was not granted are disabled outright; a tool the
    mapping does not know is left to the agent's configuration. Each tool call takes a turn, and the
    answer one more.
    """
    node = call.node or {}
    if call.purpose != "node":
        return []
    argv: list[str] = []
    granted = node.get("allowed_tools")
    if isinstance(granted, list):
        allowed = sorted({tool for name in granted for tool in claude_tools.get(name, [])})
        disallowed = sorted({tool for tools in claude_tools.values() for tool in tools} - set(allowed))
        if allowed:
            argv += ["--allowedTools", ",".join(allowed)]
        if disallowed:
            argv += ["--disallowedTools", ",".join(disallowed)]
    iterations = node.get("max_tool_iterations")
    if isinstance(iterations, int) and not isinstance(iterations, bool) and iterations >= 0:
        argv += ["--max-turns", str(iterations + 1)]
    return argv


def _reader(pipe: IO[str] | None, sink: list[str], emit: Callable[[str], None]) -> threading.Thread:
    def drain() -> None:
        assert pipe is not None
        with pipe:
            for line in pipe:
                sink.append(line)
                emit(line.rstrip("\r\n"))

    thread = threading.Thread(target=drain, name="claude-output", daemon=True)
    thread.start()
    return thread


def _wait(proc: subprocess.Popen[str], call: AgentCall, deadline: float) -> int:
    while True:
        if call.cancelled():
            raise AgentCancelled()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AgentError(f"the claude CLI did not finish within {call.timeout:g} s", kind="timeout")
        try:
            return proc.wait(timeout=min(_POLL_SECONDS, remaining))
        except subprocess.TimeoutExpired:
            continue


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the whole group has already exited
    proc.wait()


def _join(threads: list[threading.Thread], deadline: float) -> bool:
    """Wait for ``threads`` until ``deadline``; return True when all of them have finished."""
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


def _result(returncode: int, stdout: str, stderr: str) -> AgentResult:
    payload = _parse_payload(stdout)
    if returncode != 0:
        reported = _payload_text(payload) or output_head(stdout)
        reason = _first_line(_payload_text(payload)) or _first_line(stderr) or _first_line(stdout)
        raise AgentError(
            f"the claude CLI exited with code {returncode}: {reason or 'no output'}",
            kind=_classify(stderr, reported) or "exit_code",
            stderr=stderr,
            stdout_head=output_head(stdout),
        )
    if payload is None:
        raise AgentError(
            "the claude CLI printed something other than a JSON object",
            kind="invalid_output",
            stderr=stderr,
            stdout_head=output_head(stdout),
        )
    text = payload.get("result")
    if payload.get("is_error"):
        raise AgentError(
            f"the claude agent reported an error: {text or 'no message'}",
            kind=_classify(str(text or "")) or "is_error",
            stderr=stderr,
            stdout_head=output_head(stdout),
        )
    if not isinstance(text, str):
        raise AgentError(
            "the claude CLI's JSON has no `result` text",
            kind="invalid_output",
            stderr=stderr,
            stdout_head=output_head(stdout),
        )
    usage = payload.get("usage")
    return AgentResult(text=text, raw=payload, usage=usage if isinstance(usage, dict) else None)


def _parse_payload(stdout: str) -> dict[str, Any] | None:
    """The CLI's JSON object: the whole stdout, or else its last line (after any stray warnings)."""
    candidates = [stdout.strip()]
    lines = stdout.strip().splitlines()
    if len(lines) > 1:
        candidates.append(lines[-1])
    for candidate in candidates:
        try:
            payload = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(payload, dict):
            return payload
    return None


def _payload_text(payload: dict[str, Any] | None) -> str:
    result = payload.get("result") if payload else None
    return result if isinstance(result, str) else ""


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _classify(*texts: str) -> str | None:
    joined = "\n".join(texts)
    return next((kind for kind, pattern in _HINTS if pattern.search(joined)), None)
