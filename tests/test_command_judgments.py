"""A command judgment runs its command after the node's agent answers, in the same folder: exit 0 passes,
anything else fails the judgment with the end of the command's output as the issues."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from graphs.engine import run_start
from graphs.logs import writer
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, WorkNodeExecution
from tests.run_builders import drained_in_background, edges_for, latest, node, planned_run, python

pytestmark = pytest.mark.django_db

REPORT_HAS_TWO_ROWS = """
import csv, sys
rows = list(csv.reader(open("report.csv")))
print(f"report.csv has {len(rows)} rows")
sys.exit(0 if len(rows) == 2 else 1)
"""
FAILS_UNTIL_FIXED = """
import pathlib, sys
if not pathlib.Path("fixed").exists():
    print("AssertionError: expected 3 rows, got 2", file=sys.stderr)
    sys.exit(1)
print("3 rows")
"""


def _writes(name: str, content: str, answer: str):
    """A scripted agent that writes a file in its working folder, as a coding agent does, and answers."""

    def reply(call) -> str:
        (Path(call.cwd) / name).write_text(content)
        return answer

    return reply


def test_a_command_judgment_runs_after_the_answer_in_the_attempts_folder(
    task, commands_allowed, inline_executor, scripted_runner
):
    scripted_runner.replies[("node", "export")] = _writes("report.csv", "name,total\nalpha,3\n", "wrote report.csv")
    spec = node("export", judgment={"kind": "command", "command": python(REPORT_HAS_TWO_ROWS), "timeout_seconds": 60})
    run = planned_run(task, {"nodes": [spec], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["export"]

    assert row.status == "succeeded"
    assert row.output_payload["text"] == "wrote report.csv"
    assert (row.judgment_result["kind"], row.judgment_result["exit_code"]) == ("command", 0)
    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=row))
    events = [line["event"] for line in lines]
    assert events.index("agent_call") < events.index("command_start") < events.index("judgment")
    assert {"purpose": "judge", "stream": "stdout", "text": "report.csv has 2 rows"}.items() <= next(
        line for line in lines if line["event"] == "command_output"
    ).items()


def test_a_failing_command_judgment_fails_the_node_with_the_commands_output_as_the_issues(
    task, commands_allowed, inline_executor, scripted_runner
):
    scripted_runner.replies[("node", "export")] = _writes("report.csv", "name,total\n", "wrote report.csv")
    spec = node("export", judgment={"kind": "command", "command": python(REPORT_HAS_TWO_ROWS)})
    run = planned_run(task, {"nodes": [spec], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["export"]

    assert row.status == "failed"
    assert row.output_payload["text"] == "wrote report.csv"
    [issue] = row.judgment_result["issues"]
    assert "exited with code 1 (expected 0)" in issue and "report.csv has 1 rows" in issue
    assert "report.csv has 1 rows" in row.error


def test_a_failing_command_judgment_feeds_its_output_to_the_loop_backs_rerun_as_feedback(
    task, commands_allowed, inline_executor, scripted_runner
):
    scripted_runner.replies[("node", "impl", 2)] = _writes("fixed", "", "added the missing row")
    nodes = [
        node("impl"),
        node("check", "impl", judgment={"kind": "command", "command": python(FAILS_UNTIL_FIXED)},
             on_fail={"action": "loop_back", "max_attempts": 2}),
    ]
    edges = [*edges_for(nodes), {"from": "check", "to": "impl", "edge_type": "on_failure"}]
    run = planned_run(task, {"nodes": nodes, "edges": edges})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()

    assert run.status == "succeeded"
    failed_check = run.executions.get(node_id="check", attempt=1)
    assert "AssertionError: expected 3 rows, got 2" in failed_check.judgment_result["issues"][0]
    rerun_impl = run.executions.get(node_id="impl", attempt=2)
    assert rerun_impl.cause == "loop_back"
    [feedback] = rerun_impl.input_payload["feedback"]
    assert feedback.startswith("Node 'check' failed its judgment after using this work: ")
    assert "AssertionError: expected 3 rows, got 2" in feedback
    assert "AssertionError: expected 3 rows, got 2" in rerun_impl.input_payload["prompt"]
    assert run.executions.get(node_id="check", attempt=2).judgment_result["ok"] is True


WAITS_FOR_GATE = """
import pathlib, sys, time
print("judging", flush=True)
while not pathlib.Path(sys.argv[1]).exists():
    time.sleep(0.01)
"""


# The command waits for a gate file in the test's folder.
@pytest.mark.usefixtures("sandbox_writable")
@pytest.mark.django_db(transaction=True)
def test_while_a_command_judgment_runs_the_nodes_prompt_is_already_stored(
    task, commands_allowed, inline_executor, scripted_runner, monkeypatch, tmp_path
):
    gate = tmp_path / "gate"
    judging = threading.Event()

    def listener(execution, line) -> None:
        if line["event"] == "command_output" and line["text"] == "judging":
            judging.set()

    monkeypatch.setattr(writer, "_listeners", [*writer._listeners, listener])
    spec = node("export", judgment={"kind": "command", "command": python(WAITS_FOR_GATE, str(gate))})
    run = planned_run(task, {"nodes": [spec], "edges": []})
    run_start(run=run)

    with drained_in_background(inline_executor, gate=gate):
        assert judging.wait(15), "the judgment's command never started"
        row = WorkNodeExecution.objects.get(run=run, node_id="export")
        assert row.status == "running"
        assert "Do export." in row.input_payload["prompt"]
    assert latest(run)["export"].status == "succeeded"
