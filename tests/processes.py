"""Finding a test's processes from outside their sandbox, where their own pids mean nothing.

A sandboxed process has a PID namespace of its own, so the pid it reports is not the machine's. A test
gives the processes it starts a marker instead (an argument, or an environment value) and looks for it
in every process's command line and environment.
"""

from __future__ import annotations

import time
from pathlib import Path


def processes_marked(marker: str) -> list[int]:
    """The machine's live processes whose command line or environment holds ``marker`` (zombies, killed
    and waiting to be reaped, count as gone)."""
    needle = marker.encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if needle not in (proc / "cmdline").read_bytes() + (proc / "environ").read_bytes():
                continue
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if state != "Z":
            found.append(int(proc.name))
    return found


def all_gone(marker: str, *, within: float = 5.0) -> bool:
    """Whether every process marked ``marker`` is gone before ``within`` seconds pass (a SIGKILL, and a
    sandbox's end, take a moment)."""
    deadline = time.monotonic() + within
    while processes_marked(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
