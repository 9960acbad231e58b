"""What an attempt's workspace costs: its git steps with the repository's worktree pool and without
one (a worktree added and removed per attempt), and a whole node attempt through the engine on a git
project beside the same attempt on a folder that is not a repository.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python -m pytest \\
        tests/bench/bench_workspaces.py -s -p no:cacheprovider -o python_files='bench_*.py'

The repositories are generated once per session (``repository_make``): ``SIZES`` files of 1 to 6 KB
(about 3 KB on average) of source-like text in nested folders (about 25 files a folder, 2 to 4 deep),
one commit, then repacked as a clone's objects would be. The folder that is not a repository holds
the same 1,000 files without ``.git``. Every attempt changes one existing file (a few lines appended).
The attempts' worktrees go beside the repositories, or under ``WORKGRAPH_WORKSPACE_DIR`` when the
environment names one — to measure worktrees on another filesystem (a tmpfs, say) than the
repositories'.

1. The workspace's steps (``test_the_workspace_steps_of_an_attempt``): ``ROUNDS`` rounds, the sizes by
   turns (after one warm-up round each, which also makes the pool's worktrees), calling
   ``attempt_workspace`` and ``workspace_land`` as the engine does for an attempt of a real run, with
   the pool (``WORKGRAPH_WORKTREE_POOL_SIZE`` 4) and without (0: every attempt adds a worktree and
   removes it; not at ``NO_POOL_MAX`` files and above, where one attempt takes minutes). A round is two
   cases:

   - ``fast-forward``: one attempt alone, so its commit becomes the branch's head as it is;
   - ``branch moved``: two attempts start from the same head and the other lands first, so this one's
     landing is a ``git merge-tree`` merge and a merge commit (the bench checks it is).

   The steps, each timed around the product's own functions: "prepare" is entering
   ``attempt_workspace`` (the run's workspace row, the branch head, then a pooled worktree moved to
   it — ``git checkout --force --detach`` — or a worktree added); "commit" is ``_commit`` (``git add
   --all``, ``write-tree``, ``commit-tree``); "land" is the rest of ``workspace_land`` — reading the
   head, the merge when it moved, ``git update-ref``; "diff" is ``_run_diff_record`` and
   ``_change_record`` — ``git diff --numstat`` and ``git diff`` twice (the attempt's change, the run's
   whole change) and their rows written; "release" is leaving the block (the pooled worktree swept,
   checked out again and cleaned with ``git clean -ffdx``, or the worktree removed). Cells are p50 over
   the rounds; "total" is the sum's p50 and p95. The row "not a repository" is the same block on the
   plain folder, where it does nothing. The targets printed after: p50 of a pooled attempt's total
   at most ``TARGETS`` ms by size.

2. A whole attempt through the engine (``test_a_node_attempt_through_the_engine``): a chain of
   ``CHAIN`` nodes, run ``RUNS`` times on each project by turns (after one warm-up run each) with the
   inline executor in this process and the scripted agent changing one file in the folder it is given;
   every node is judged (the scripted judge passes it at once). "In-node" is an attempt's
   ``started_at`` → ``finished_at`` (claim, prompt, agent and judge calls, worktree and landing,
   the result recorded), p50 and p95 over every attempt; "per node" is a run's wall time over its
   nodes, p50 over the runs. "÷ plain" divides a row's per-node p50 by the plain folder's: what the
   workspace multiplies a node's whole cost by when its agent takes no time at all (the target: at
   most ``CHAIN_TARGET`` at 10,000 files). A run's first attempt also creates the run's branch. Each git
   project runs by each of ``BACKENDS`` (``WORKGRAPH_GIT_BACKEND``): ``cli``, every step a git process,
   and ``auto``, staged, committed and landed through libgit2 in-process.

Timings move with the machine's other work; compare rows of one sitting, and read the load average
printed with the tables.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.utils import timezone

from graphs.agents import AgentCall
from graphs.engine import run_start
from graphs.models import PLANNING_NODE_ID, Task, WorkNodeExecution
from graphs.workspaces import worktrees as workspaces
from graphs.workspaces.worktrees import attempt_workspace, workspace_land
from tests import factories
from tests.bench.report import load_average, ms, p95, tables
from tests.run_builders import edges_for, node, planned_run

# 100,000 files only when BENCH_WORKSPACES_100K is set: generating that repository takes a quarter of
# an hour on a loaded machine.
SIZES = (1_000, 10_000, *((100_000,) if os.environ.get("BENCH_WORKSPACES_100K") else ()))
# The sizes the chain runs on through the engine, and the size from which no attempt is measured without
# the pool.
CHAIN_SIZES = (1_000, 10_000)
NO_POOL_MAX = 100_000
POOL_SIZE = 4
TARGETS = {10_000: 150.0, 100_000: 1_000.0}
CHAIN_TARGET = 3.0
# WORKGRAPH_GIT_BACKEND: the git CLI alone, and libgit2 in-process wherever it does what git does.
BACKENDS = ("cli", "auto")
PLAIN = "not a repository (1,000 files)"
ROUNDS = 9
CHAIN = 10
RUNS = 3
FILES_PER_FOLDER = 25
FOLDER_NAMES = ("core", "api", "models", "utils", "services", "handlers", "views", "db", "io", "net", "auth",
                "cache", "jobs", "cli", "config", "tests", "docs", "schemas", "events", "metrics")
EXTENSIONS = (".py", ".py", ".py", ".ts", ".md", ".json", ".yaml")
WORDS = ("value", "result", "items", "config", "request", "handler", "record", "count", "index", "cursor",
         "payload", "session", "buffer", "status", "entry", "window", "token", "limit", "offset", "node")
STEPS = ("prepare", "commit", "land", "diff", "release")


def _line(rng: random.Random) -> str:
    """A line of something like source code."""
    a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
    return rng.choice((
        f"def {a}_{b}({c}, *, {a}_limit={rng.randint(1, 999)}):",
        f"    {a} = {b}.get({c!r}, {rng.randint(0, 99)})",
        f"    if {a} is None or {b} > {c}_limit:",
        f"        return {a}_{b}({c}) + {rng.randint(1, 9)}",
        f"    # The {a} of each {b} is kept until its {c} is stored.",
        f"class {a.title()}{b.title()}({c.title()}Base):",
        "",
    ))


def repository_make(folder: Path, *, files: int, git: bool = True) -> list[str]:
    """Fill ``folder`` with ``files`` generated files (the same for the same count) and, when ``git``,
    commit them and repack; return their paths, relative to ``folder``."""
    rng = random.Random(files)
    folders = [
        "/".join(rng.choice(FOLDER_NAMES) + (str(index) if depth == 0 else "") for depth in range(rng.randint(2, 4)))
        for index in range(max(files // FILES_PER_FOLDER, 1))
    ]
    paths = []
    for index in range(files):
        path = f"{folders[index % len(folders)]}/{rng.choice(WORDS)}_{index}{rng.choice(EXTENSIONS)}"
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        size = rng.randint(1024, 6 * 1024)
        lines: list[str] = []
        while sum(len(line) + 1 for line in lines) < size:
            lines.append(_line(rng))
        target.write_text("\n".join(lines) + "\n")
        paths.append(path)
    if git:
        _git(folder, "init", "--quiet", "--initial-branch=main")
        _git(folder, "add", "--all")
        _git(folder, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-m", "start")
        _git(folder, "repack", "-a", "-d", "-q")
        _git(folder, "prune")
    return paths


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True).stdout


@dataclass(frozen=True)
class Project:
    name: str
    folder: Path
    paths: list[str]
    files: int


@pytest.fixture(scope="session")
def projects(tmp_path_factory) -> Iterator[dict[str, Project]]:
    root = tmp_path_factory.mktemp("bench-workspaces")
    made = {}
    for files in SIZES:
        name = f"git, {files:,} files"
        made[name] = Project(name, root / f"repo{files}", repository_make(root / f"repo{files}", files=files), files)
    made[PLAIN] = Project(PLAIN, root / "plain", repository_make(root / "plain", files=1_000, git=False), 1_000)
    yield made
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def workspace_dir(settings, tmp_path) -> Iterator[Path]:
    """Where the attempts' worktrees go: under ``WORKGRAPH_WORKSPACE_DIR`` when the environment names
    one (another filesystem than the repositories', say), else beside the repositories."""
    named = os.environ.get("WORKGRAPH_WORKSPACE_DIR")
    folder = Path(named) / f"bench-{tmp_path.name}" if named else tmp_path / "workspaces"
    settings.WORKGRAPH_WORKSPACE_DIR = folder
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _change_make(folder: Path, path: str, tag: str) -> None:
    """One attempt's change: a few lines appended to one existing file."""
    with open(folder / path, "a") as file:
        file.write(f"\n# {tag}\ndef {tag.replace('-', '_')}():\n    return {len(tag)}\n")


class StepClock:
    """Seconds spent in some functions of ``graphs.workspaces.worktrees``, summed by name since ``reset()``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, names: tuple[str, ...]) -> None:
        self.spent: dict[str, float] = {}
        for name in names:
            monkeypatch.setattr(workspaces, name, self._timed(name, getattr(workspaces, name)))

    def _timed(self, name: str, function: Callable) -> Callable:
        @functools.wraps(function)
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - started

        return timed

    def reset(self) -> None:
        self.spent = {}


def _attempt_steps(execution: WorkNodeExecution, *, project: Project, path: str, clock: StepClock,
                   meanwhile: Callable[[], None] | None = None) -> dict[str, float]:
    """One attempt's workspace steps in ms; ``meanwhile`` runs after its change is made, before it lands."""
    started = time.perf_counter()
    with attempt_workspace(execution) as workspace:
        entered = time.perf_counter()
        if workspace is None:
            _change_make(project.folder, path, f"n{execution.pk.hex[:8]}")
            landed = time.perf_counter()
            change = None
        else:
            _change_make(workspace.cwd, path, f"n{execution.pk.hex[:8]}")
            if meanwhile is not None:
                meanwhile()
            clock.reset()
            landing = time.perf_counter()
            change = workspace_land(workspace, execution)
            landed = time.perf_counter()
    ended = time.perf_counter()
    if change is None:
        return {"prepare": entered - started, "release": ended - landed}
    merged = change.merge_commit != change.result_commit
    assert merged == (meanwhile is not None), "a moved branch must give a merge, an unmoved one a fast-forward"
    commit = clock.spent["_commit"]
    diff = clock.spent["_run_diff_record"] + clock.spent["_change_record"]
    return {"prepare": entered - started, "commit": commit, "land": landed - landing - commit - diff, "diff": diff,
            "release": ended - landed}


def _execution(run, node_id: str) -> WorkNodeExecution:
    return WorkNodeExecution.objects.create(run=run, node_id=node_id, subagent_type="planner", attempt=1,
                                            status="running", started_at=timezone.now())


def _project_task(project: Project, alice) -> Task:
    return factories.TaskFactory(project=factories.ProjectFactory(target_folder=str(project.folder)), created_by=alice)


@pytest.mark.django_db(transaction=True)
def test_the_workspace_steps_of_an_attempt(projects, alice, workspace_dir, monkeypatch, settings):
    clock = StepClock(monkeypatch, ("_commit", "_run_diff_record", "_change_record"))
    variants = [(f"pool of {POOL_SIZE}", POOL_SIZE, projects),
                ("no pool", 0, {name: project for name, project in projects.items()
                                if project.files < NO_POOL_MAX and name != PLAIN})]
    samples: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    load_before = load_average()
    for variant, pool_size, measured in variants:
        settings.WORKGRAPH_WORKTREE_POOL_SIZE = pool_size
        runs = {name: planned_run(_project_task(project, alice), {"nodes": [node("n0")], "edges": []})
                for name, project in measured.items()}
        for round_ in range(ROUNDS + 1):
            for name, project in measured.items():
                for case, sample in _round(runs[name], project, round_, clock).items():
                    if round_:
                        samples.setdefault((variant, name, case), []).append(sample)

    rows, totals = [], {}
    for (variant, name, case), attempts in samples.items():
        sums = [sum(attempt.values()) for attempt in attempts]
        totals[(variant, name, case)] = statistics.median(sums)
        cells = [ms(statistics.median(a[step] for a in attempts)) if step in attempts[0] else "" for step in STEPS]
        case = "nothing to do" if name == PLAIN else case
        rows.append([variant, name, case, str(len(attempts)), *cells, ms(statistics.median(sums)), ms(p95(sums))])
    header = ["worktrees", "project", "case", "attempts", *STEPS, "total p50", "total p95"]
    print(f"\n\nWorkspace steps of an attempt, ms ({os.cpu_count()} cores; load average {load_before} before,"
          f" {load_average()} after)\n{tables(header, rows)}\n")
    verdicts = []
    for files, limit in TARGETS.items():
        if files not in SIZES:
            continue
        for case in ("fast-forward", "branch moved"):
            total = totals[(variants[0][0], f"git, {files:,} files", case)] * 1000
            verdicts.append([f"{files:,} files, {case}", f"{total:,.0f} ms", f"{limit:,.0f} ms",
                             "met" if total <= limit else "not met"])
    print(f"Targets, p50 of a pooled attempt's total\n{tables(['case', 'measured', 'limit', ''], verdicts)}\n")


def _round(run, project: Project, round_: int, clock: StepClock) -> dict[str, dict[str, float]]:
    """One round's attempts on ``project``: one alone, and (in a repository) one whose branch another
    attempt moves before it lands. Each round changes files of its own: every landing is a change,
    the merges never conflict."""
    paths = project.paths[3 * round_: 3 * round_ + 3]
    done = {"fast-forward": _attempt_steps(_execution(run, f"alone{round_}"), project=project, path=paths[0],
                                           clock=clock)}
    if project.name == PLAIN:
        return done
    other = _execution(run, f"other{round_}")
    with attempt_workspace(other) as other_workspace:
        _change_make(other_workspace.cwd, paths[1], f"other{round_}")

        def other_lands() -> None:
            workspace_land(other_workspace, other)

        done["branch moved"] = _attempt_steps(_execution(run, f"moved{round_}"), project=project, path=paths[2],
                                              clock=clock, meanwhile=other_lands)
    return done


@pytest.mark.django_db(transaction=True)
def test_a_node_attempt_through_the_engine(projects, alice, workspace_dir, scripted_runner, inline_executor, settings):
    changes = iter(range(1_000_000))
    current: dict[str, Project] = {}

    def changes_one_file(call: AgentCall) -> str:
        index = next(changes)
        paths = current["project"].paths
        path = paths[(7 * index) % len(paths)]
        _change_make(call.cwd, path, f"change{index}")
        return f"changed {path}"

    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, CHAIN)]
    for item in nodes:
        scripted_runner.replies[("node", item["node_id"])] = changes_one_file
    # Each git project twice, by its backend: the git CLI alone, and libgit2 where it does what git does.
    cases = [(f"{name}, {backend}", name, backend) for name, project in projects.items()
             if project.files in CHAIN_SIZES and name != PLAIN for backend in BACKENDS] + [(PLAIN, PLAIN, "cli")]
    tasks = {label: _project_task(projects[name], alice) for label, name, _ in cases}
    in_node: dict[str, list[float]] = {}
    per_node: dict[str, list[float]] = {}
    load_before = load_average()
    for round_ in range(RUNS + 1):
        for label, name, backend in cases:
            settings.WORKGRAPH_GIT_BACKEND = backend
            run = planned_run(tasks[label], {"nodes": nodes, "edges": edges_for(nodes)})
            current["project"] = projects[name]
            started = time.perf_counter()
            run_start(run=run)
            inline_executor.drain()
            wall = time.perf_counter() - started
            run.refresh_from_db()
            assert run.status == "succeeded", run.error
            if not round_:
                continue
            rows = run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).values_list("started_at", "finished_at")
            assert len(rows) == CHAIN
            in_node.setdefault(label, []).extend((end - start).total_seconds() for start, end in rows)
            per_node.setdefault(label, []).append(wall / CHAIN)

    plain = statistics.median(per_node[PLAIN])
    rows = [
        [label, f"{RUNS} x {CHAIN}", ms(statistics.median(times)), ms(p95(times)),
         ms(statistics.median(per_node[label])), f"{statistics.median(per_node[label]) / plain:.2f}x"]
        for label, times in in_node.items()
    ]
    header = ["project, backend", "runs x nodes", "in-node p50", "in-node p95", "per node p50", "÷ plain"]
    print(f"\n\nA node attempt through the engine, ms (inline executor, scripted agent, pool of {POOL_SIZE};"
          f" {os.cpu_count()} cores; load average {load_before} before, {load_average()} after)\n"
          f"{tables(header, rows)}\n")
    for backend in BACKENDS:
        ratio = statistics.median(per_node[f"git, 10,000 files, {backend}"]) / plain
        print(f"Target: per node at 10,000 files ({backend}) {ratio:.2f}x the plain folder's, at most "
              f"{CHAIN_TARGET:.0f}x: {'met' if ratio <= CHAIN_TARGET else 'not met'}\n")
