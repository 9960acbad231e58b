"""A benchmarked system in a process of its own, driven one graph at a time so systems can take turns.

The program prints ``READY`` once it is warm, then reads graph names on stdin, one a line, and answers
each with one line ``BENCH {json}`` once that graph has run; anything else it prints is kept for the
error message. Taking turns graph by graph, every system sees the same machine: this one's speed
drifts by ±15% within minutes, which measured one system after the other moved their ratios as much.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

TAIL_LINES = 60


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
        return json.loads(self._next_line(prefix="BENCH ", timeout=timeout).removeprefix("BENCH "))

    def stop(self) -> None:
        if self._process.stdin and not self._process.stdin.closed:
            self._process.stdin.close()  # the program's loop ends at the end of its input
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

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
