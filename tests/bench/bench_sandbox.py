"""What the sandbox costs an attempt: a no-op started in bubblewrap beside the same no-op started as it is,
and one whole node attempt through the engine, both ways.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    .venv/bin/python -m pytest tests/bench/bench_sandbox.py -s -p no:cacheprovider -o python_files='bench_*.py'

It needs a bubblewrap that can sandbox here (marker ``sandbox``: skipped otherwise, outside CI). Each
measurement is made with ``WORKGRAPH_SANDBOX=none`` and with ``WORKGRAPH_SANDBOX=bwrap`` (a Django
settings override around each sample), ``REPETITIONS`` times after ``WARM_UP`` unrecorded rounds. A round
takes every measurement once in each mode, the two modes by turns and in alternating order, so a drift
of the machine moves both alike. The measurements, each on the product's own code:

1. "no-op process (Popen to exit)": ``true`` started the way ``graphs.workspaces.command_process.command_run`` starts a
   command (argv and environment from ``graphs.workspaces.sandbox.sandboxed``, stdin closed, stdout and stderr
   piped, a session of its own), timed from ``Popen`` to its exit with its pipes read to their end:
   what ``bwrap``'s own start (namespaces, mounts) adds to a process;
2. "no-op through command_run": ``true`` through ``command_run`` itself: the sandbox's private home
   made and removed, the argv built, the draining threads, the wait;
3. "command node attempt (true)": a one-node run whose node is the command node ``true``, in a project
   that allows commands (its folder not a repository, so there is no worktree), started and drained
   with the inline executor in this process; an attempt's wall time is its row's ``started_at`` →
   ``finished_at`` (claim, the command, its log lines, the judgment by exit code, the result recorded);
4. "agent node attempt (fake claude CLI)": the same with an agent node whose agent is the claude
   runner starting the fake Claude CLI (``tests/fake_claude.py``, a Python script, playing
   ``tests/fixtures/claude/unknown_event.json``: five stream-json events, then exit 0), so the CLI's
   own start is a Python interpreter's, and the sandbox binds the CLI's folder read-only as it does a
   real CLI's.

Both modes search the same ``PATH``: the console's, less the folders the sandbox does not show
(``graphs.workspaces.sandbox.SYSTEM_FOLDERS`` are all it shows). Otherwise a ``PATH`` that finds ``python3`` first
in a folder of the user's (a pyenv shim: a shell script that starts pyenv, some 150 ms) would start the
fake CLI that way unsandboxed and as the system's ``/usr/bin/python3`` in the sandbox, and the row
would measure the shim.

Cells are p50 and p95 over the samples; "added by bwrap (p50)" is the bwrap p50 less the unsandboxed p50, and
"÷ none" the bwrap p50 over the unsandboxed one. The target is under ``TARGET_MS`` added per
attempt; each row says whether its added p50 meets it (the process rows are the part of an attempt the
sandbox touches, so they must meet it too). ``command_run`` sees its process end through
``Popen.wait`` with a timeout (``graphs.workspaces.processes``), which checks after about 1, 3, 7, 15 and 31 ms:
a no-op that bwrap brings to its end in 19 ms is seen ending at about 34, so "no-op through
command_run" adds bwrap's own start (the row above it) and up to one step of that polling.
Timings move with the machine's other work; compare rows of one sitting, and read the load average
printed with the table.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from graphs.engine import run_start
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun
from graphs.workspaces.command_process import command_run
from graphs.workspaces.sandbox import SYSTEM_FOLDERS, Confinement, process_env, sandbox_state, sandboxed
from tests.bench.report import load_average, ms, p95, tables
from tests.run_builders import node, planned_run

REPETITIONS = 50
WARM_UP = 3
TARGET_MS = 50.0
MODES = ("none", "bwrap")
NOOP = ["true"]
CLAUDE_FIXTURE = "unknown_event.json"
COMMAND_TIMEOUT = 30.0


@dataclass(frozen=True)
class Measurement:
    """One row of the table: ``sample(mode)`` does it once in the sandbox mode and returns its seconds."""

    name: str
    sample: Callable[[str], float]


def _noop_process(folder: Path) -> Callable[[str], float]:
    def sample(mode: str) -> float:
        confinement = Confinement(workdir=folder, network=False, env=process_env(settings.WORKGRAPH_COMMAND_ENV))
        with sandboxed(NOOP, confinement) as (argv, env):
            # The sandbox is the one asked for: bwrap starts the no-op, or the no-op starts as it is.
            assert (Path(argv[0]).name == "bwrap") == (mode == "bwrap"), argv
            started = time.perf_counter()
            proc = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
            stdout, stderr = proc.communicate(timeout=COMMAND_TIMEOUT)
            ended = time.perf_counter()
        assert (proc.returncode, stdout, stderr) == (0, b"", b""), stderr
        return ended - started

    return sample


def _noop_command_run(folder: Path) -> Callable[[str], float]:
    def sample(mode: str) -> float:
        started = time.perf_counter()
        result = command_run(NOOP, cwd=folder, timeout=COMMAND_TIMEOUT, env=process_env(settings.WORKGRAPH_COMMAND_ENV),
                             output_max_bytes=settings.WORKGRAPH_COMMAND_OUTPUT_MAX_BYTES,
                             on_output=lambda stream, text: None)
        ended = time.perf_counter()
        assert (result.exit_code, result.start_error, result.output) == (0, None, ""), result
        return ended - started

    return sample


def _node_attempt(task: Task, inline_executor, manifest_node: dict, *, output: str) -> Callable[[str], float]:
    def sample(mode: str) -> float:
        run = planned_run(task, {"nodes": [manifest_node], "edges": []})
        run_start(run=run)
        inline_executor.drain()
        run = WorkGraphRun.objects.get(pk=run.pk)
        assert run.status == "succeeded", run.error
        [attempt] = run.executions.exclude(node_id__startswith=PLANNING_NODE_ID)
        assert (attempt.status, attempt.output_payload["text"]) == ("succeeded", output)
        return (attempt.finished_at - attempt.started_at).total_seconds()

    return sample


def _system_path(path: str) -> str:
    """The folders of ``path`` that the sandbox shows, in their order."""
    return os.pathsep.join(entry for entry in path.split(os.pathsep)
                           if any(Path(entry).is_relative_to(folder) for folder in SYSTEM_FOLDERS))










@pytest.mark.sandbox
@pytest.mark.django_db(transaction=True)
def test_what_the_sandbox_adds_to_a_no_op_and_to_a_node_attempt(task, commands_allowed, inline_executor, claude_cli,
                                                                 monkeypatch):
    claude_cli(CLAUDE_FIXTURE)
    monkeypatch.setenv("PATH", _system_path(os.environ.get("PATH", "")))
    assert "FAKE_CLAUDE_FIXTURE" in settings.WORKGRAPH_AGENT_ENV, "the fake CLI must be passed its scenario"
    with override_settings(WORKGRAPH_SANDBOX="bwrap"):
        assert sandbox_state().confined, sandbox_state().problem
    folder = Path(task.project.target_folder)
    measurements = [
        Measurement("no-op process (Popen to exit)", _noop_process(folder)),
        Measurement("no-op through command_run", _noop_command_run(folder)),
        Measurement("command node attempt (true)", _node_attempt(
            task, inline_executor, {"node_id": "noop", "depends_on": [], "command": NOOP}, output="")),
        Measurement("agent node attempt (fake claude CLI)", _node_attempt(
            task, inline_executor, node("answer"), output="Done.")),
    ]
    samples: dict[tuple[str, str], list[float]] = {}
    load_before = load_average()
    started = time.perf_counter()
    for round_ in range(WARM_UP + REPETITIONS):
        for measurement in measurements:
            for mode in MODES if round_ % 2 else reversed(MODES):
                with override_settings(WORKGRAPH_SANDBOX=mode):
                    seconds = measurement.sample(mode)
                if round_ >= WARM_UP:
                    samples.setdefault((measurement.name, mode), []).append(seconds)
    took = time.perf_counter() - started

    rows = []
    for measurement in measurements:
        none, bwrap = samples[(measurement.name, "none")], samples[(measurement.name, "bwrap")]
        added = statistics.median(bwrap) - statistics.median(none)
        rows.append([
            measurement.name, ms(statistics.median(none)), ms(p95(none)), ms(statistics.median(bwrap)),
            ms(p95(bwrap)), ms(added), f"{statistics.median(bwrap) / statistics.median(none):.2f}x",
            "yes" if added * 1000 < TARGET_MS else "no",
        ])
    header = ["measurement", "none p50", "none p95", "bwrap p50", "bwrap p95", "added by bwrap (p50)", "÷ none",
              f"added < {TARGET_MS:g} ms"]
    print(f"\n\nWhat the sandbox adds, ms ({REPETITIONS} samples a cell after {WARM_UP} warm-up rounds, {took:.0f} s;"
          f" {os.cpu_count()} cores; load average {load_before} before, {load_average()} after)\n"
          f"{tables(header, rows)}\n")
