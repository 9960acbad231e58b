"""A benchmarked system in a process of its own, driven one graph at a time so systems can take turns.

The program prints ``READY`` once it is warm, then reads graph names on stdin, one a line, and answers
each with one line ``BENCH {json}`` once that graph has run; anything else it prints is kept for the
error message. Taking turns graph by graph, every system sees the same machine: this one's speed
drifts by ±15% within minutes, which measured one system after the other moved their ratios as much.

A turn ends only once the program and its children are idle: the peer's server goes on recording a
flow's task runs for seconds after the flow returned, and that work must not land on the next
system's turn.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

TAIL_LINES = 60
# Idle: the process tree used under this share of one core over the last window.
QUIET_CPU_SHARE = 0.05
QUIET_WINDOW_SECONDS = 0.5
QUIET_TIMEOUT_SECONDS = 120.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class TurnTaker:
    def __init__(self, argv: list[str], *, cwd: Path, env: dict[str, str], name: str) -> None:
        self.name = name
        self._process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        threading.Thread(target=self._read_forever, daemon=True).start()

    def wait_ready(self, *, timeout: float) -> None:
        self._next_line(prefix="READY", timeout=timeout)

    def run(self, graph: str, *, timeout: float) -> dict[str, Any]:
        """Run one graph and return what the program reported for it."""
        self._process.stdin.write(graph + "\n")
        self._process.stdin.flush()
        report = json.loads(self._next_line(prefix="BENCH ", timeout=timeout).removeprefix("BENCH "))
        self._wait_quiet()
        return report

    def stop(self) -> None:
        if self._process.stdin and not self._process.stdin.closed:
            self._process.stdin.close()  # the program's loop ends at the end of its input
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _wait_quiet(self) -> None:
        deadline = time.monotonic() + QUIET_TIMEOUT_SECONDS
        used = _tree_cpu_seconds(self._process.pid)
        while time.monotonic() < deadline:
            time.sleep(QUIET_WINDOW_SECONDS)
            now = _tree_cpu_seconds(self._process.pid)
            if now - used < QUIET_CPU_SHARE * QUIET_WINDOW_SECONDS:
                return
            used = now
        raise TimeoutError(f"{self.name}: still busy {QUIET_TIMEOUT_SECONDS:g} s after its run")

    def _read_forever(self) -> None:
        for line in self._process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _next_line(self, *, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"{self.name}: no {prefix.strip()} line in {timeout:g} s:\n{self._output()}")
            if line is None:
                raise RuntimeError(f"{self.name} exited ({self._process.wait()}):\n{self._output()}")
            if line.startswith(prefix):
                return line
            self._tail.append(line)

    def _output(self) -> str:
        return "\n".join(self._tail)


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) used so far by the process ``pid`` and every descendant alive."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rpartition(")")[2].split()
            total += (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile: what it used is no longer counted, and no longer competing
    return total
