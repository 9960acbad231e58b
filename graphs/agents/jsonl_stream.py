"""What every agent CLI that prints one JSON event a line shares: its stdout read line by line, each
event turned into log lines by the CLI's own reader, the lines that were not events kept (where a CLI
that died says why), and the head and last lines of stdout kept for the attempt's record."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import IO, Any

from graphs.agents.base import AgentCall, AgentCancelled, AgentError, AgentResult, output_head
from graphs.workspaces.processes import group_wait, pipe_drain

# How much of stdout an error keeps: its head (as other runners do) and its last lines, where a stream
# that broke off shows how far it got.
HEAD_CHARS = 2000
TAIL_LINES = 20
TAIL_LINE_CHARS = 2000
CUT_SUFFIX = " …[cut]"
# How much of a failed tool call's error the call's result keeps: a line a page can show.
TOOL_ERROR_CHARS = 300


def cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters marked as cut."""
    return text if len(text) <= limit else text[:limit] + CUT_SUFFIX


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def hint_of(hints: tuple[tuple[str, re.Pattern[str]], ...], *texts: str) -> str | None:
    """The kind of the first of ``hints`` whose pattern a CLI's words match: how its failure is classified."""
    joined = "\n".join(texts)
    return next((kind for kind, pattern in hints if pattern.search(joined)), None)


class JsonlStreamReader:
    """Feeds each stdout line to ``lines`` (the CLI's own mapping of one event to log lines) and logs
    them through the call as they arrive. Only the stdout thread feeds it."""

    def __init__(self, call: AgentCall, *, tool_input_max_chars: int, tool_result_max_chars: int) -> None:
        self.call = call
        self.tool_input_max_chars = tool_input_max_chars
        self.tool_result_max_chars = tool_result_max_chars
        self.head = ""
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        # The stdout lines that were not events: where a CLI that died says why.
        self._plain: deque[str] = deque(maxlen=TAIL_LINES)
        # The tool calls whose result was an error (a tool the agent may not use, a command that
        # failed), and the first one's words: a call can succeed while its tools failed.
        self.tool_failures = 0
        self.tool_failure_first = ""

    def tail(self) -> str:
        """The last lines of stdout, each cut to a readable length."""
        return "".join(self._tail)

    def feed(self, raw: str) -> None:
        if len(self.head) < HEAD_CHARS:
            self.head = output_head(self.head + raw, HEAD_CHARS)
        self._tail.append(cut(raw.rstrip("\r\n"), TAIL_LINE_CHARS) + "\n")
        line = raw.strip()
        if not line:
            return
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            # A warning or progress text the CLI printed among its events.
            self._plain.append(cut(line, TAIL_LINE_CHARS))
            self.call.emit(raw.rstrip("\r\n"))
            return
        for kind, fields in self.lines(event):
            if kind == "tool_result" and fields.get("is_error") is True:
                self._tool_failed(str(fields.get("content") or ""))
            self.call.emit_event(kind, fields)

    def _tool_failed(self, content: str) -> None:
        self.tool_failures += 1
        if self.tool_failures == 1:
            words = " ".join(self.tool_error_text(content).split()) or "the tool reported an error without words"
            self.tool_failure_first = cut(words, TOOL_ERROR_CHARS)

    def tool_error_text(self, content: str) -> str:
        """A failed tool result's words as a person reads them (a CLI drops its own markup here)."""
        return content

    def lines(self, event: Any) -> list[tuple[str, dict[str, Any]]]:
        """The log lines one event of the stream becomes."""
        raise NotImplementedError

    def outcome(self, returncode: int, stderr: str) -> AgentResult:
        """The call's result once the CLI exited, or the AgentError that says why it failed."""
        raise NotImplementedError


def stream_cli_run(
    *, cli: str, program: str, argv: list[str], env: dict[str, str], cwd: Path, call: AgentCall, prompt: bytes,
    stream: JsonlStreamReader,
) -> AgentResult:
    """Start the agent CLI ``cli`` (already sandboxed: ``argv`` and ``env`` are bubblewrap's), give it the
    prompt on stdin, read its events into ``stream`` and its stderr into the log, and return what the
    stream makes of its exit; a timeout or a cancel stops its whole process group and raises. ``program``
    is the CLI's own path, for the errors that name it."""
    proc = _start(cli, program, argv, env, cwd=cwd)
    stderr: list[str] = []

    def stderr_line(line: str) -> None:
        stderr.append(line)
        call.emit(line.rstrip("\r\n"))

    threads = [
        _writer(proc.stdin, prompt, name=f"{cli}-stdin"),
        pipe_drain(proc.stdout, stream.feed, name=f"{cli}-stdout"),
        pipe_drain(proc.stderr, stderr_line, name=f"{cli}-stderr"),
    ]
    end = group_wait(proc, threads=threads, deadline=time.monotonic() + call.timeout, cancelled=call.cancelled)
    if end.returncode is None:
        error = AgentCancelled() if end.stopped == "cancelled" else AgentError(
            f"the {cli} CLI did not finish within {call.timeout:g} s", kind="timeout")
        error.stderr, error.stdout_head, error.stdout_tail = "".join(stderr), stream.head, stream.tail()
        raise error
    return stream.outcome(end.returncode, "".join(stderr))


def _start(cli: str, program: str, argv: list[str], env: dict[str, str], *, cwd: Path) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            # Its own process group, so a timeout or a cancel also stops the tools and commands it spawned.
            start_new_session=True,
        )
    except FileNotFoundError:
        raise AgentError(f"the {cli} CLI {program!r} was not found", kind="not_found") from None
    except PermissionError:
        raise AgentError(f"the {cli} CLI {program!r} is not executable", kind="not_found") from None


def _writer(pipe: IO[bytes] | None, data: bytes, *, name: str) -> threading.Thread:
    """Write the prompt to the CLI's stdin and close it, on a thread: a CLI that reads slowly (or not
    at all) must not hold up the timeout and cancel checks."""

    def write() -> None:
        assert pipe is not None
        try:
            with pipe:
                pipe.write(data)
        except (BrokenPipeError, ValueError):
            pass  # the CLI exited (or was killed) before reading it all; its exit and output say why

    thread = threading.Thread(target=write, name=name, daemon=True)
    thread.start()
    return thread
