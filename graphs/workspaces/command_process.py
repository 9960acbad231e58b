"""Running a command — a command node's or a command judgment's — the way every command runs.

``command_run`` starts the argv (no shell) in the given folder, in its sandbox (graphs.workspaces.sandbox: the folder
the only one it may write, no network unless allowed), in a process group of its own, with stdin closed
and only the environment it is handed (``graphs.workspaces.sandbox.process_env``: an allowlist of names, never the
console's own). Each line of stdout and stderr goes to ``on_output`` as it arrives; at the timeout or on
a cancel the sandbox is killed, and everything in it ends. The combined output is kept up to a cap, its
last bytes, and what was dropped is counted.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphs.workspaces.processes import group_wait, pipe_drain
from graphs.workspaces.sandbox import Confinement, SandboxError, program_missing, sandboxed

logger = logging.getLogger(__name__)

# A line longer than this reaches ``on_output`` in pieces (and the log as several lines).
OUTPUT_LINE_MAX_BYTES = 16 * 1024


@dataclass(frozen=True)
class CommandResult:
    """How one command ended. ``exit_code`` is None when it never ran to its end: it timed out, was
    cancelled, or could not start (``start_error`` says why)."""

    argv: tuple[str, ...]
    exit_code: int | None
    duration_ms: int
    timeout: float
    # The last bytes of stdout and stderr as they came, up to the cap; ``dropped_bytes`` came before them.
    output: str
    dropped_bytes: int = 0
    timed_out: bool = False
    cancelled: bool = False
    start_error: str | None = None


def command_run(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str],
    output_max_bytes: int,
    on_output: Callable[[str, str], None],
    cancel_event: threading.Event | None = None,
    network: bool = False,
) -> CommandResult:
    """Run ``argv`` in ``cwd`` until it exits, ``timeout`` seconds pass or ``cancel_event`` is set.

    ``on_output(stream, text)`` gets each line (``stream`` is ``stdout`` or ``stderr``, ``text`` the line
    without its newline) on the thread draining that stream; a callback that raises is logged, never
    raised, so the stream is still drained. ``network`` lets the command reach the network.
    """
    argv = tuple(argv)
    started = time.monotonic()
    tail = _OutputTail(max_bytes=output_max_bytes)

    def ended(**fields) -> CommandResult:
        return CommandResult(argv=argv, duration_ms=round((time.monotonic() - started) * 1000), timeout=timeout,
                             output=tail.text(), dropped_bytes=tail.dropped, **fields)

    if not cwd.is_dir():
        return ended(exit_code=None, start_error=f"the working folder {cwd} does not exist")
    missing = program_missing(argv[0], cwd=cwd, path=env.get("PATH", ""))
    if missing:
        return ended(exit_code=None, start_error=f"{argv[0]!r} could not be started: {missing}")
    try:
        with sandboxed(argv, Confinement(workdir=cwd, network=network, env=env)) as (start_argv, start_env):
            return _command_wait(argv, start_argv, start_env, cwd=cwd, started=started, timeout=timeout, tail=tail,
                                 ended=ended, on_output=on_output, cancel_event=cancel_event)
    except SandboxError as error:
        return ended(exit_code=None, start_error=str(error))


def _command_wait(argv: tuple[str, ...], start_argv: list[str], start_env: dict[str, str], *, cwd: Path,
                  started: float, timeout: float, tail: _OutputTail, ended: Callable[..., CommandResult],
                  on_output: Callable[[str, str], None], cancel_event: threading.Event | None) -> CommandResult:
    try:
        proc = subprocess.Popen(
            start_argv, cwd=cwd, env=start_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )
    except (OSError, ValueError) as error:
        return ended(exit_code=None, start_error=f"{argv[0]!r} could not be started: {error}")

    def sink(stream: str) -> Callable[[str], None]:
        def take(line: str) -> None:
            tail.add(line)
            try:
                on_output(stream, line.rstrip("\r\n"))
            except Exception:
                logger.exception("on_output callback failed for command %r", argv[0])

        return take

    threads = [
        pipe_drain(proc.stdout, sink("stdout"), name="command-stdout", max_line_bytes=OUTPUT_LINE_MAX_BYTES),
        pipe_drain(proc.stderr, sink("stderr"), name="command-stderr", max_line_bytes=OUTPUT_LINE_MAX_BYTES),
    ]
    cancelled = cancel_event.is_set if cancel_event is not None else lambda: False
    end = group_wait(proc, threads=threads, deadline=started + timeout, cancelled=cancelled)
    return ended(exit_code=end.returncode, timed_out=end.stopped == "timeout", cancelled=end.stopped == "cancelled")



class _OutputTail:
    """The last ``max_bytes`` of a command's output, fed a line at a time by both draining threads."""

    def __init__(self, *, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def add(self, line: str) -> None:
        chunk = line.encode("utf-8")
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size > self._max_bytes:
                first, excess = self._chunks[0], self._size - self._max_bytes
                if len(first) <= excess:
                    self._chunks.popleft()
                    cut = len(first)
                else:
                    self._chunks[0] = first[excess:]
                    cut = excess
                self._size -= cut
                self.dropped += cut

    def text(self) -> str:
        with self._lock:
            # A cut inside a multi-byte character leaves a replacement character at the very start.
            return b"".join(self._chunks).decode("utf-8", errors="replace")
