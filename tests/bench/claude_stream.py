"""The claude runner's side of ``bench_claude_stream.py``, as a program on the benchmark's database.

    python -m tests.bench.claude_stream rounds FIXTURE ROUNDS TASK_ID
    python -m tests.bench.claude_stream start TASK_ID

The environment names the settings, the database and Redis (``live_console.console_env``), and
``live_console.console_set_up`` has migrated the database and made the task.

- ``rounds`` has ``tests/fake_claude.py`` play FIXTURE three ways, one after the other, ROUNDS times
  (so a drift of the machine moves all three alike), and prints one JSON line per play:
  ``floor`` reads the fake CLI's stdout line by line and nothing else; ``runner`` is
  ``ClaudeRunner(bin=fake).run(call)`` with callbacks that do nothing; ``store`` is the engine's
  ``attempt_agent_call`` for a fresh running attempt of the task — each event through
  ``log_append`` — until ``log_writes_wait`` says every line is stored and handed to the publisher.
  Each play has ``wall_s``, ``cpu_s`` (this process's CPU time, all its threads; not the servers')
  and ``cli_cpu_s`` (the fake CLI's); ``store`` also ``returned_s`` (when the call returned) and
  ``stored_lines``.
- ``start`` plans a run of the task with one node and starts it on this process's executor (the
  Celery queue the environment names), then prints the node's attempt's id.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import django

FAKE_CLAUDE = Path(__file__).parent.parent / "fake_claude.py"
# What the runner sends the CLI (the fake refuses any other argv), and the prompt on its stdin.
ARGV = ["--agent", "worker", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "auto"]
PROMPT = "Survey the modules under src/ and what each one does."
STORE_WAIT_SECONDS = 300.0
NODE_ID = "stream"


def main(arguments: list[str]) -> None:
    django.setup()
    command, *rest = arguments
    if command == "rounds":
        fixture, rounds, task_id = rest
        rounds_play(fixture=fixture, rounds=int(rounds), task_id=task_id)
    elif command == "start":
        node_start(task_id=rest[0])
    else:
        raise SystemExit(f"unknown command {command!r}")


def rounds_play(*, fixture: str, rounds: int, task_id: str) -> None:
    from django.conf import settings

    from graphs.agents import ClaudeRunner
    from graphs.models import Task

    os.environ["FAKE_CLAUDE_FIXTURE"] = fixture  # passed to the runner's CLI (tests.settings' WORKGRAPH_AGENT_ENV)
    # The fixture lies in the benchmark's scratch folder, which the CLI's sandbox must see.
    settings.WORKGRAPH_SANDBOX_READ_ONLY = [*settings.WORKGRAPH_SANDBOX_READ_ONLY, str(Path(fixture).parent)]
    task = Task.objects.select_related("project").get(pk=task_id)
    runner = ClaudeRunner(bin=str(FAKE_CLAUDE))
    with tempfile.TemporaryDirectory(prefix="bench-claude-stream-") as cwd:
        for round_index in range(rounds):
            for play, measure in (("floor", _floor), ("runner", _runner), ("store", _store)):
                children = _children_cpu()
                measured = measure(runner=runner, cwd=Path(cwd), task=task)
                print(json.dumps({"round": round_index, "play": play, **measured,
                                  "cli_cpu_s": _children_cpu() - children}), flush=True)


def _children_cpu() -> float:
    """The CPU time of this process's children that have exited: the fake CLI, once a play is done."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _floor(*, runner, cwd: Path, task) -> dict:
    """The same bytes from the same CLI through the same kind of pipe, read line by line and dropped."""
    cpu, wall = time.process_time(), time.perf_counter()
    process = subprocess.Popen([runner.bin, *ARGV], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    with process.stdin:
        process.stdin.write(PROMPT.encode())
    lines = 0
    with process.stdout:
        for _ in process.stdout:
            lines += 1
    process.stderr.read()
    process.stderr.close()
    if process.wait() != 0:
        raise RuntimeError(f"the fake CLI exited with {process.returncode}")
    return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "lines": lines}


def _nothing(*_: object) -> None:
    return None


def _runner(*, runner, cwd: Path, task) -> dict:
    from graphs.agents import AgentCall

    call = AgentCall(org_node="worker", prompt=PROMPT, cwd=cwd, timeout=STORE_WAIT_SECONDS, on_line=_nothing,
                     on_event=_nothing)
    cpu, wall = time.process_time(), time.perf_counter()
    result = runner.run(call)
    measured = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    return {**measured, "tool_calls": result.tool_calls}


def _store(*, runner, cwd: Path, task) -> dict:
    from graphs.engine.calls import attempt_agent_call
    from graphs.logs.store import log_file_close, log_file_open, log_writes_wait
    from graphs.models import ExecutionLogLine
    from tests import factories

    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)  # as the engine's claim does, before the call
    cpu, wall = time.process_time(), time.perf_counter()
    attempt_agent_call(runner, execution, node={"node_id": execution.node_id}, prompt=PROMPT, purpose="node",
                       cancel_event=threading.Event(), cwd=Path(task.project.target_folder))
    returned = time.perf_counter() - wall
    if not log_writes_wait(STORE_WAIT_SECONDS):
        raise RuntimeError(f"the lines were not all stored within {STORE_WAIT_SECONDS:g} s")
    measured = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "returned_s": returned}
    log_file_close(execution=execution)
    return {**measured, "stored_lines": ExecutionLogLine.objects.filter(log_file_id=execution.pk).count()}


def node_start(*, task_id: str) -> None:
    from graphs.engine import run_start
    from graphs.models import Task
    from tests.run_builders import node, planned_run

    run = planned_run(Task.objects.get(pk=task_id), {"nodes": [node(NODE_ID)], "edges": []})
    run_start(run=run)
    execution = run.executions.get(node_id=NODE_ID)
    print(json.dumps({"run": str(run.pk), "execution": str(execution.pk)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
