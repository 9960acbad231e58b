"""A command node runs its command instead of an agent: its output streams live, its exit code decides,
and the end of its output is its node output and, when it fails, its judgment's issue."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from graphs.engine import run_start
from graphs.logs import writer
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, RunWorkspace, WorkGraphRun
from tests.repos import git, writes
from tests.run_builders import command_node, drained_in_background, edges_for, latest, node, planned_run

GATED = """
import pathlib, sys, time
print("collecting 3 tests", flush=True)
while not pathlib.Path(sys.argv[1]).exists():
    time.sleep(0.01)
print("3 passed", flush=True)
"""
FAILING = """
import sys
print("test_export_has_a_header ... ok")
print("test_export_applies_filters ... FAILED", file=sys.stderr)
sys.exit(1)
"""
# Fails until the file `fixed` exists in the working folder, as a test suite fails until the code is fixed.
FAILS_UNTIL_FIXED = """
import pathlib, sys
if not pathlib.Path("fixed").exists():
    print("FAIL: the CSV has no header row")
    sys.exit(1)
print("all checks passed")
"""


def _events(row, event: str) -> list[dict]:
    return [line for line in log_read(log_file=ExecutionLogFile.objects.get(node_exec=row)) if line["event"] == event]


# The command waits for a gate file in the test's folder.
@pytest.mark.usefixtures("sandbox_writable")
@pytest.mark.django_db(transaction=True)
def test_a_command_nodes_output_is_in_its_stored_log_while_the_command_still_runs(
    task, commands_allowed, inline_executor, monkeypatch, tmp_path
):
    gate = tmp_path / "gate"
    first_line_stored = threading.Event()

    def listener(execution, line) -> None:
        if line["event"] == "command_output" and line["text"] == "collecting 3 tests":
            first_line_stored.set()

    monkeypatch.setattr(writer, "_listeners", [*writer._listeners, listener])
    run = planned_run(task, {"nodes": [command_node("tests", GATED, args=(str(gate),), timeout_seconds=60)],
                             "edges": []})
    run_start(run=run)

    with drained_in_background(inline_executor, gate=gate):
        assert first_line_stored.wait(15), "the command's first line was never stored"
        row = latest(run)["tests"]
        assert row.status == "running"
        [start] = _events(row, "command_start")
        assert (start["purpose"], start["argv"][-1], start["cwd"]) == ("node", str(gate), task.project.target_folder)
        assert [(line["stream"], line["text"]) for line in _events(row, "command_output")] == [
            ("stdout", "collecting 3 tests")
        ]
        assert _events(row, "command_exit") == []
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    row = latest(run)["tests"]
    assert row.output_payload["text"] == "collecting 3 tests\n3 passed\n"
    assert row.output_payload["exit_code"] == 0
    assert isinstance(row.output_payload["duration_ms"], int)
    assert (row.judgment_result["kind"], row.judgment_result["ok"]) == ("command", True)
    [end] = _events(row, "command_exit")
    assert (end["exit_code"], end["timed_out"]) == (0, False)


@pytest.mark.django_db
def test_a_non_zero_exit_fails_the_node_with_the_end_of_its_output_as_the_issue(
    task, commands_allowed, inline_executor
):
    nodes = [command_node("tests", FAILING), node("ship", "tests")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    rows = latest(run)

    assert run.status == "failed"
    tests = rows["tests"]
    assert tests.status == "failed"
    assert tests.output_payload["exit_code"] == 1
    # stdout and stderr are read side by side: their lines are all there, in the order they arrived.
    assert sorted(tests.output_payload["text"].splitlines()) == [
        "test_export_applies_filters ... FAILED", "test_export_has_a_header ... ok",
    ]
    [issue] = tests.judgment_result["issues"]
    assert tests.judgment_result["kind"] == "command"
    assert "exited with code 1 (expected 0)" in issue
    assert "test_export_applies_filters ... FAILED" in issue
    assert ("stderr", "test_export_applies_filters ... FAILED") in [
        (line["stream"], line["text"]) for line in _events(tests, "command_output")
    ]
    assert rows["ship"].status == "blocked"


@pytest.mark.django_db
def test_expect_exit_makes_another_exit_code_the_success(task, commands_allowed, inline_executor):
    nodes = [
        command_node("grep_finds_nothing", "import sys; sys.exit(1)", expect_exit=1),
        command_node("grep_finds_something", "import sys; sys.exit(0)", expect_exit=1),
    ]
    run = planned_run(task, {"nodes": nodes, "edges": []})
    run_start(run=run)
    inline_executor.drain()
    rows = latest(run)

    assert rows["grep_finds_nothing"].status == "succeeded"
    assert rows["grep_finds_something"].status == "failed"
    assert "exited with code 0 (expected 1)" in rows["grep_finds_something"].judgment_result["issues"][0]


@pytest.mark.django_db
def test_a_failing_command_node_loops_back_with_its_output_as_the_upstream_nodes_feedback(
    task, commands_allowed, inline_executor, scripted_runner
):
    def fix(call) -> str:
        (Path(call.cwd) / "fixed").touch()
        return "added the header row"

    scripted_runner.replies[("node", "impl", 2)] = fix
    nodes = [node("impl"), command_node("check", FAILS_UNTIL_FIXED, "impl",
                                        on_fail={"action": "loop_back", "max_attempts": 2})]
    edges = [*edges_for(nodes), {"from": "check", "to": "impl", "edge_type": "on_failure"}]
    run = planned_run(task, {"nodes": nodes, "edges": edges})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()

    assert run.status == "succeeded"
    first, second = run.executions.filter(node_id="check").order_by("attempt")
    assert first.output_payload["text"] == "FAIL: the CSV has no header row\n"
    assert second.output_payload["text"] == "all checks passed\n"
    rerun_impl = run.executions.get(node_id="impl", attempt=2)
    assert rerun_impl.cause == "loop_back"
    assert any("FAIL: the CSV has no header row" in item for item in rerun_impl.input_payload["feedback"])
    assert "FAIL: the CSV has no header row" in rerun_impl.input_payload["prompt"]


# Reads what the upstream node wrote, says where it runs, and writes a file of its own.
READS_AND_WRITES = """
import os, pathlib
print(pathlib.Path("src/feature.py").read_text(), end="")
print(os.getcwd())
pathlib.Path("src/generated.py").write_text("GENERATED = True\\n")
"""


@pytest.mark.django_db
def test_in_a_repository_a_command_node_runs_in_its_attempts_worktree_and_its_change_lands(
    repo, repo_task, commands_allowed, scripted_runner, inline_executor
):
    scripted_runner.replies[("node", "build")] = writes("src/feature.py", "FEATURE = True\n")
    nodes = [node("build"), command_node("generate", READS_AND_WRITES, "build")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    generate = latest(run)["generate"]

    assert generate.status == "succeeded"
    printed, cwd = generate.output_payload["text"].splitlines()
    assert printed == "FEATURE = True"
    assert Path(cwd) != repo
    assert git(Path(cwd), "status", "--porcelain", "--ignored") == ""  # its worktree was given back clean
    workspace = RunWorkspace.objects.get(run=run)
    assert git(Path(workspace.repository), "show", f"{workspace.branch}:src/generated.py") == "GENERATED = True\n"
    assert not (repo / "src" / "generated.py").exists()
