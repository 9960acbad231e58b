"""A 1,000-node run with real worktrees on real Celery workers, and what must hold after a fault in it.

The run: a root, ``LANES`` chains hanging off it and a join — ``CHAOS_NODES`` nodes (200 by default, so
that ``make chaos`` stays within its budget on a 2-core machine; the documented run sets 1,000), every
one a node whose offline agent writes a file of its own (``<node_id>.py``), so every attempt that
succeeds commits a change and lands it on the run's branch. Two workers (``celery -A console worker``,
prefork, two processes each; the first also runs beat, the reaper on its schedule) execute it against
the suite's own PostgreSQL and Redis (tests/chaos.py).

``verdict`` reads what a fault must not break, each a problem when broken:

- the run ended ``succeeded``, or in a recorded failed state whose reason names the fault;
- no node landed twice: on the run's branch, the commits of attempts (``<node> attempt <n>``) are one a
  node, and each is recorded as its attempt's landing; every succeeded node's recorded change is there;
- every log's line numbers are 1…n;
- once the workers are gone and ``workspaces_prune`` has run, no worktree of the run is left (the
  repository lists only its own folder and its pool) and no process of the workers is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import InterfaceError, OperationalError, connections
from django.db.models import Count, Max, Min

from graphs.models import AttemptChange, ExecutionLogLine, WorkGraphRun
from graphs.workspaces.worktrees import workspaces_prune
from tests.celery_worker import Broker, Worker, worker_env, worker_start
from tests.repos import git, repository_init
from tests.run_builders import edges_for, node_rows

NODES = int(os.environ.get("CHAOS_NODES", "200"))
LANES = 8
RUN_TIMEOUT = float(os.environ.get("CHAOS_RUN_TIMEOUT", "900"))
GIT_WRAPPER = Path(__file__).parent / "bin" / "git"
WORKER_ENV = {
    "WORKGRAPH_AGENT": "offline",
    "WORKGRAPH_OFFLINE_LINE_DELAY": "0",
    "WORKGRAPH_HEARTBEAT_SECONDS": "0.5",
    "WORKGRAPH_REAP_AFTER_SECONDS": "4",
    "WORKGRAPH_REAP_INTERVAL_SECONDS": "1",
}


def chaos_manifest(nodes: int = NODES) -> dict:
    """A root, ``LANES`` chains and a join: ``nodes`` nodes in all, each writing ``<node_id>.py``."""
    length = max(1, (nodes - 2) // LANES)
    items = [_writer("n0000")]
    lane_ends = []
    for lane in range(LANES):
        previous = "n0000"
        for step in range(length):
            node_id = f"n{1 + lane * length + step:04d}"
            items.append(_writer(node_id, previous))
            previous = node_id
        lane_ends.append(previous)
    items.append(_writer(f"n{1 + LANES * length:04d}", *lane_ends))
    return {"nodes": items, "edges": edges_for(items)}


def _writer(node_id: str, *deps: str) -> dict:
    # The offline agent saves a test_script node's text as <node_id>.py where commands are allowed; planned
    # by the planner (not the validator), the script is not run.
    return {"node_id": node_id, "depends_on": list(deps), "task_prompt": f"Write {node_id}.py.",
            "node_type": "test_script"}


def db_read(read: Callable[[], Any]) -> Any:
    """``read()``, or None while the database is away (its connection is then dropped, to be opened anew)."""
    try:
        return read()
    except (OperationalError, InterfaceError):
        connections.close_all()
        return None


def wait_for(condition: Callable[[], bool], *, timeout: float, message: Callable[[], str]) -> None:
    """Poll ``condition`` (read through ``db_read``) until it holds; fail with ``message()`` at the deadline."""
    deadline = time.monotonic() + timeout
    while not db_read(condition):
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s: {db_read(message) or 'the database is away'}")
        time.sleep(0.2)


@dataclass
class Chaos:
    """One fault case's repository, workspace folder, workers and the git wrapper they run."""

    broker: Broker
    folder: Path
    workspace_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    marker: str = field(default_factory=lambda: f"chaos-{uuid.uuid4().hex[:12]}")
    started: list[Worker] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bin = self.folder / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        shutil.copy(GIT_WRAPPER, self.bin / "git")

    def arm(self, moment: str) -> None:
        """Kill the next worker that lands a change, at ``moment`` (``before-landing``, ``after-landing``)."""
        (self.bin / moment).touch()

    def kill_taken(self, moment: str) -> bool:
        return (self.bin / f"{moment}.taken").exists()

    def worker(self, name: str, *, beat: bool = False) -> Worker:
        env = worker_env(broker=self.broker, **WORKER_ENV, WORKGRAPH_WORKSPACE_DIR=str(self.workspace_dir),
                         PATH=f"{self.bin}:{os.environ['PATH']}", CHAOS_MARK=self.marker, **self.extra_env)
        started = worker_start(name=f"{name}-{len(self.started)}", env=env, log_dir=self.folder, beat=beat)
        self.started.append(started)
        return started

    def logs(self) -> str:
        return "\n".join(f"--- {w.name}\n{w.log_text()[-2500:]}" for w in self.started)

    def stop(self) -> None:
        for started in self.started:
            started.stop()


def repository_make(folder: Path) -> Path:
    folder.mkdir(parents=True)
    return repository_init(folder)


def run_finished(run: WorkGraphRun, chaos: Chaos, *, timeout: float = RUN_TIMEOUT) -> WorkGraphRun:
    wait_for(lambda: WorkGraphRun.objects.get(pk=run.pk).is_finished(), timeout=timeout,
             message=lambda: f"the run is still {WorkGraphRun.objects.get(pk=run.pk).status}, "
             f"{node_rows(run).filter(status='succeeded').count()} nodes succeeded:\n{chaos.logs()}")
    return WorkGraphRun.objects.get(pk=run.pk)


def succeeded_count(run: WorkGraphRun) -> int:
    return node_rows(run).filter(status="succeeded").count()


def wait_succeeded(run: WorkGraphRun, chaos: Chaos, count: int) -> None:
    """Until ``count`` nodes succeeded; fail at once if the run ends first."""
    def reached() -> bool:
        current = WorkGraphRun.objects.get(pk=run.pk)
        if current.is_finished():
            raise AssertionError(f"the run ended {current.status} early: {current.error}\n{chaos.logs()}")
        return succeeded_count(run) >= count

    wait_for(reached, timeout=RUN_TIMEOUT, message=lambda: f"{succeeded_count(run)} nodes succeeded:\n{chaos.logs()}")


def verdict(run: WorkGraphRun, chaos: Chaos, *, fault_words: tuple[str, ...]) -> list[str]:
    """Everything the fault broke, in words; empty when nothing was lost, duplicated or left behind."""
    run = WorkGraphRun.objects.get(pk=run.pk)
    problems = []
    if run.status != "succeeded" and not any(word in (run.error or "") for word in fault_words):
        errors = sorted(set(node_rows(run).filter(status="failed").values_list("error", flat=True)))[:5]
        problems.append(f"the run ended {run.status} with a reason that names no fault: {run.error!r}; "
                        f"its failed attempts: {errors}")
    problems += _landing_problems(run)
    problems += _log_problems(run)
    chaos.stop()
    workspaces_prune([run])
    problems += _leftover_problems(run, chaos)
    return problems


def _landing_problems(run: WorkGraphRun) -> list[str]:
    workspace = run.workspace
    top = Path(workspace.repository)
    out = git(top, "log", "--format=%H %P%x09%s", f"refs/heads/{workspace.branch}", "--not", workspace.base_commit)
    landed: dict[str, str] = {}
    by_node: Counter[str] = Counter()
    for line in out.splitlines():
        hashes, _, subject = line.partition("\t")
        commit, *parents = hashes.split()
        if len(parents) == 1 and " attempt " in subject:
            landed[commit] = subject
            by_node[subject.split(" attempt ")[0]] += 1
    problems = [f"{node_id} landed {count} times on the run's branch" for node_id, count in by_node.items()
                if count > 1]
    changes = AttemptChange.objects.filter(run=run).exclude(merge_commit="").select_related("node_exec")
    recorded = {change.result_commit for change in changes}
    problems += [f"{landed[commit]} landed without being recorded" for commit in set(landed) - recorded]
    problems += [f"{change.node_exec.node_id} attempt {change.node_exec.attempt} is recorded as landed, "
                 "and is not on the run's branch" for change in changes if change.result_commit not in landed]
    missing = set(node_rows(run).filter(status="succeeded").values_list("node_id", flat=True)) - set(by_node)
    problems += [f"{node_id} succeeded and its change never landed" for node_id in sorted(missing)]
    return problems


def _log_problems(run: WorkGraphRun) -> list[str]:
    logs = (ExecutionLogLine.objects.filter(log_file__node_exec__run=run).values("log_file_id")
            .annotate(lines=Count("id"), first=Min("seq"), last=Max("seq")))
    return [f"log {log['log_file_id']} holds {log['lines']} lines numbered {log['first']}…{log['last']}: "
            f"{_gaps(log['log_file_id'])}" for log in logs if log["first"] != 1 or log["last"] != log["lines"]]


def _gaps(log_file_id: Any) -> str:
    """Where a log's numbering breaks: the lines on either side of each gap (and the first, when not 1)."""
    lines = list(ExecutionLogLine.objects.filter(log_file_id=log_file_id).order_by("seq").values_list("seq", "text"))
    breaks = [(before, after) for before, after in zip([(0, "(start)"), *lines], lines, strict=False)
              if after[0] != before[0] + 1]
    return "; ".join(f"{before[1][:200]} then {after[1][:200]}" for before, after in breaks)


def _leftover_problems(run: WorkGraphRun, chaos: Chaos) -> list[str]:
    top = Path(run.workspace.repository)
    problems = []
    pool = Path(chaos.workspace_dir) / "pool"
    listed = subprocess.run(["git", "-C", str(top), "worktree", "list", "--porcelain"], capture_output=True,
                            text=True, check=True).stdout
    for block in listed.strip().split("\n\n"):
        path = Path(block.splitlines()[0].removeprefix("worktree "))
        if path != top and pool not in path.parents:
            problems.append(f"a worktree is left behind: {path}")
        if "\nprunable" in block:
            problems.append(f"a worktree is listed whose folder is gone: {path}")
    if (Path(chaos.workspace_dir) / run.run_id.hex[:8]).exists():
        problems.append("the run's workspace folder is left behind")
    sessions = {started.process.pid for started in chaos.started}
    problems += [f"process {pid} of a worker is left behind" for pid in _processes_of(sessions, chaos.marker)]
    return problems


def _processes_of(sessions: set[int], marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            environ = (proc / "environ").read_bytes()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if stat[0] != "Z" and (int(stat[3]) in sessions or marker.encode() in environ):
            found.append(int(proc.name))
    return found
