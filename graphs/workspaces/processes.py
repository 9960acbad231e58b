"""Waiting on a child process that runs in a process group of its own, its output drained on threads.

The claude runner and the command runner start their child with ``start_new_session=True`` and share
the rest: each output pipe is drained on a thread, so a full pipe never stalls the child and every
line is handed on as it arrives, while the calling thread polls for the child's exit, its deadline and
a cancel. Stopping it kills the whole group, so whatever the child spawned stops with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Literal

POLL_SECONDS = 0.05
# How long the output threads may take to reach end-of-file after the process is gone.
DRAIN_SECONDS = 2.0


@dataclass(frozen=True)
class GroupEnd:
    """How a waited-on process ended: its exit code, or why it was stopped (its code is then None)."""

    returncode: int | None
    stopped: Literal["timeout", "cancelled"] | None = None


def pipe_drain(
    pipe: IO[bytes] | None, sink: Callable[[str], Any], *, name: str, max_line_bytes: int = -1
) -> threading.Thread:
    """Hand each line of ``pipe``, decoded as UTF-8 (a bad byte replaced), to ``sink`` on a thread of its
    own until end-of-file, then close the pipe.

    A line longer than ``max_line_bytes`` (unbounded when negative) comes in pieces of that size, so
    output without newlines cannot grow one line without bound.
    """

    def drain() -> None:
        assert pipe is not None
        with pipe:
            for line in iter(lambda: pipe.readline(max_line_bytes), b""):
                sink(line.decode("utf-8", errors="replace"))

    thread = threading.Thread(target=drain, name=name, daemon=True)
    thread.start()
    return thread


def group_wait(
    proc: subprocess.Popen[bytes], *, threads: list[threading.Thread], deadline: float,
    cancelled: Callable[[], bool],
) -> GroupEnd:
    """Wait until ``proc`` exits, ``deadline`` (a ``time.monotonic()`` value) passes or ``cancelled()``
    holds, then for ``threads`` to finish draining its output.

    A process stopped at its deadline or on a cancel is killed with its group. So is a leftover child
    that still holds the pipes open after the process itself exited: it belonged to the process.
    """
    stopped = _exit_wait(proc, deadline=deadline, cancelled=cancelled)
    if stopped is not None:
        group_kill(proc)
        threads_join(threads, time.monotonic() + DRAIN_SECONDS)
        return GroupEnd(returncode=None, stopped=stopped)
    if not threads_join(threads, time.monotonic() + DRAIN_SECONDS):
        group_kill(proc)
        threads_join(threads, time.monotonic() + DRAIN_SECONDS)
    return GroupEnd(returncode=proc.returncode)


def _exit_wait(
    proc: subprocess.Popen[bytes], *, deadline: float, cancelled: Callable[[], bool]
) -> Literal["timeout", "cancelled"] | None:
    """None once ``proc`` has exited; else why waiting stopped first."""
    while True:
        if cancelled():
            return "cancelled"
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        try:
            proc.wait(timeout=min(POLL_SECONDS, remaining))
            return None
        except subprocess.TimeoutExpired:
            continue


def group_kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill every process of ``proc``'s group (``proc`` leads it) and reap ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the whole group has already exited
    proc.wait()


def threads_join(threads: list[threading.Thread], deadline: float) -> bool:
    """Wait for ``threads`` until ``deadline``; return True when all of them have finished."""
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)
