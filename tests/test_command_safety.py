"""What bounds a command: only projects with allow_commands run one; its whole process group is killed at
its timeout or when its run is cancelled; its output is capped; it sees only an allowlisted environment."""

from __future__ import annotations

import json
import os
import threading
import uuid
from pathlib import Path

import pytest

from graphs.engine import run_cancel, run_start, run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.logs import writer
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile
from tests.processes import all_gone, processes_marked
from tests.run_builders import command_node, latest, node, planned_run, python

# Starts a child that would outlive it, marked (as it is) by the argument it was given, then hangs.
SPAWNS_AND_HANGS = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", sys.argv[1]])
print("started", flush=True)
time.sleep(120)
"""


def _marker() -> str:
    return f"workgraph-test-{uuid.uuid4().hex}"


# Committed rows: the heartbeat, on a connection of its own, must see the attempt the command outlasts.
@pytest.mark.django_db(transaction=True)
def test_a_hanging_command_is_killed_with_the_children_it_spawned_at_its_timeout(
    task, commands_allowed, inline_executor
):
    marker = _marker()
    spec = command_node("hangs", SPAWNS_AND_HANGS, args=(marker,), timeout_seconds=3)
    run = planned_run(task, {"nodes": [spec], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["hangs"]

    assert row.status == "failed"
    assert row.output_payload["timed_out"] is True
    assert row.output_payload["exit_code"] is None
    assert row.output_payload["text"] == "started\n"
    [issue] = row.judgment_result["issues"]
    assert "timed out after 3 s and was killed" in issue
    assert all_gone(marker), "a process of the command's sandbox outlived its timeout"


@pytest.mark.django_db(transaction=True)
def test_cancelling_the_run_kills_the_commands_process_group(task, commands_allowed, settings, monkeypatch):
    settings.WORKGRAPH_HEARTBEAT_SECONDS = 0.05
    started = threading.Event()

    def listener(execution, line) -> None:
        if line["event"] == "command_output" and line["text"] == "started":
            started.set()

    monkeypatch.setattr(writer, "_listeners", [*writer._listeners, listener])
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        marker = _marker()
        nodes = [command_node("hangs", SPAWNS_AND_HANGS, args=(marker,), timeout_seconds=60), node("ship", "hangs")]
        run = planned_run(task, {"nodes": nodes, "edges": []})
        run_start(run=run)
        assert started.wait(15), "the command never started"
        assert len(processes_marked(marker)) >= 2, "the command and its child are not both running"
        run_cancel(run=run)
        run = run_wait_finished(run_id=run.run_id, timeout=10)
    finally:
        executor_set(previous)
    rows = latest(run)

    assert run.status == "cancelled"
    assert rows["hangs"].status == "cancelled"
    assert rows["ship"].status == "cancelled"
    assert all_gone(marker), "a process of the command's sandbox outlived the cancel"


WRITES_A_FILE = "import pathlib; pathlib.Path('{name}').write_text('it ran')"


@pytest.mark.django_db
def test_a_project_without_allow_commands_runs_none_of_them_and_says_why(task, inline_executor, scripted_runner):
    nodes = [
        command_node("tests", WRITES_A_FILE.format(name="node_ran"),
                     on_fail={"action": "retry_self", "max_attempts": 3}),
        node("review", judgment={"kind": "command", "command": python(WRITES_A_FILE.format(name="judge_ran"))}),
        node("docs"),
    ]
    run = planned_run(task, {"nodes": nodes, "edges": []})
    run_start(run=run)
    inline_executor.drain()
    rows = latest(run)
    folder = Path(task.project.target_folder)

    assert not (folder / "node_ran").exists()
    assert not (folder / "judge_ran").exists()
    for node_id in ("tests", "review"):
        row = rows[node_id]
        assert row.status == "failed"
        assert row.attempt == 1, "no retry or loop-back can allow commands"
        assert row.judgment_result["kind"] == "commands_disabled"
        assert row.error.startswith("commands_disabled: the project does not allow commands")
        assert "allow_commands" in row.error
        [refused] = [line for line in log_read(log_file=ExecutionLogFile.objects.get(node_exec=row))
                     if line["event"] == "commands_disabled"]
        assert "did not run" in refused["reason"]
    assert "(as its judgment)" in rows["review"].error
    assert scripted_runner.node_calls() == [("docs", 1)], "a node whose judgment cannot run is not worth its agent"
    assert rows["docs"].status == "succeeded"


@pytest.mark.django_db
def test_a_command_sees_only_the_allowlisted_environment(
    task, commands_allowed, inline_executor, settings, monkeypatch
):
    monkeypatch.setenv("SECRET_KEY", "the-consoles-secret-key")
    monkeypatch.setenv("DATABASE_URL", "postgres://console:password@db/console")
    monkeypatch.setenv("WORKGRAPH_OPENAI_API_KEY", "sk-the-consoles-key")
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    monkeypatch.setenv("LANG", "C.UTF-8")
    settings.WORKGRAPH_COMMAND_ENV = ["PIP_INDEX_URL"]
    spec = command_node("env", "import json, os; print(json.dumps(dict(os.environ)))")
    run = planned_run(task, {"nodes": [spec], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    seen = json.loads(latest(run)["env"].output_payload["text"])

    assert "SECRET_KEY" not in seen and "DATABASE_URL" not in seen and "WORKGRAPH_OPENAI_API_KEY" not in seen
    assert seen["PIP_INDEX_URL"] == "https://mirror.example/simple"
    assert (seen["PATH"], seen["LANG"]) == (os.environ["PATH"], "C.UTF-8")
    # Python itself may add LC_CTYPE (PEP 538's locale coercion), and the sandbox PWD; nothing else is there.
    assert set(seen) <= {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PIP_INDEX_URL", "LC_CTYPE", "PWD"}


@pytest.mark.django_db
def test_a_commands_output_keeps_its_last_bytes_and_counts_the_rest(task, commands_allowed, inline_executor, settings):
    settings.WORKGRAPH_COMMAND_OUTPUT_MAX_BYTES = 1024
    spec = command_node("chatty", "for i in range(500): print(f'line {i:04d}')")  # 500 lines of 10 bytes
    run = planned_run(task, {"nodes": [spec], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["chatty"]

    assert row.status == "succeeded"
    text = row.output_payload["text"]
    assert len(text.encode()) == 1024
    assert text.endswith("line 0498\nline 0499\n")
    assert row.output_payload["output_dropped_bytes"] == 5000 - 1024
    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=row))
    assert len([line for line in lines if line["event"] == "command_output"]) == 500
    [end] = [line for line in lines if line["event"] == "command_exit"]
    assert end["output_dropped_bytes"] == 5000 - 1024
