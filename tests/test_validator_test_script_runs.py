"""A validator's test_script node is executed against the repository after its agent writes it: where the
project allows commands its script is saved as ``<node_id>.py`` in the attempt's folder and run there, in
the sandbox, and its exit code and output judge the node; where it does not, the node says the script did
not run. A command node of the plan that runs the script already is the only run of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs.domain.judgments.command import validator_script_command, validator_script_file
from graphs.engine import run_start
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile
from tests.run_builders import latest, planned_run

pytestmark = pytest.mark.django_db

PASSES = "print('scenario 1: the export has a header ... ok')\n"
FAILS = (
    "import sys\n"
    "print('scenario 2: the export applies filters ... FAILED (expected 3 rows, got 2)')\n"
    "sys.exit(1)\n"
)


def _script_node(node_id: str = "validator_test_script") -> dict:
    return {
        "node_id": node_id, "node_type": "test_script", "depends_on": [],
        "task_prompt": "Write a runnable Python script that checks the scenarios against the repository.",
        "judgment": {"kind": "mechanical", "check_ref": "check_script_compiles"},
    }


def _answer(script: str) -> str:
    return f"The check script:\n\n```python\n{script}```\n"


def _events(row, event: str) -> list[dict]:
    return [line for line in log_read(log_file=ExecutionLogFile.objects.get(node_exec=row)) if line["event"] == event]


def _validator_run(task, scripted_runner, inline_executor, script: str, *extra: dict):
    scripted_runner.replies[("node", "validator_test_script")] = _answer(script)
    run = planned_run(task, {"nodes": [_script_node(), *extra], "edges": []}, org_node="validator")
    run_start(run=run)
    inline_executor.drain()
    return latest(run)


def test_a_passing_script_is_run_in_the_attempts_folder_and_passes_the_node(
    repo_task, commands_allowed, inline_executor, scripted_runner
):
    row = _validator_run(repo_task, scripted_runner, inline_executor, PASSES)["validator_test_script"]

    assert row.status == "succeeded"
    assert row.judgment_result["kind"] == "command"
    assert row.judgment_result["command"] == ["python3", "validator_test_script.py"]
    assert (row.judgment_result["exit_code"], row.judgment_result["check_ref"]) == (0, "check_script_compiles")
    [start] = _events(row, "command_start")
    assert start["purpose"] == "judge"
    assert ("stdout", "scenario 1: the export has a header ... ok") in [
        (line["stream"], line["text"]) for line in _events(row, "command_output")
    ]


def test_a_failing_script_fails_the_node_with_its_output_as_the_reason(
    task, commands_allowed, inline_executor, scripted_runner
):
    row = _validator_run(task, scripted_runner, inline_executor, FAILS)["validator_test_script"]

    assert row.status == "failed"
    [issue] = row.judgment_result["issues"]
    assert "`python3 validator_test_script.py` exited with code 1 (expected 0)" in issue
    assert "scenario 2: the export applies filters ... FAILED (expected 3 rows, got 2)" in issue
    assert "FAILED (expected 3 rows, got 2)" in row.error
    assert (Path(task.project.target_folder) / "validator_test_script.py").read_text() == FAILS


def test_a_project_without_commands_says_on_the_node_that_its_script_did_not_run(
    task, inline_executor, scripted_runner
):
    row = _validator_run(task, scripted_runner, inline_executor, FAILS)["validator_test_script"]

    assert row.status == "succeeded"
    assert row.judgment_result["issues"] == [
        "the project does not allow commands, so python3 validator_test_script.py (its test script) did not run;"
        " a project admin can turn on allow_commands for the project"
    ]
    assert _events(row, "command_start") == []
    assert not (Path(task.project.target_folder) / "validator_test_script.py").exists()


def test_a_script_a_command_node_runs_is_run_once_by_that_node(
    task, commands_allowed, inline_executor, scripted_runner
):
    def saves(call) -> str:
        (Path(call.cwd) / "validator_test_script.py").write_text(PASSES)
        return _answer(PASSES)

    scripted_runner.replies[("node", "validator_test_script")] = saves
    runs_it = {"node_id": "validator_run_test_script", "node_type": "run_test_script",
               "depends_on": ["validator_test_script"], "command": ["python3", "validator_test_script.py"]}
    run = planned_run(task, {"nodes": [_script_node(), runs_it], "edges": []}, org_node="validator")
    run_start(run=run)
    inline_executor.drain()
    rows = latest(run)

    assert rows["validator_test_script"].judgment_result["kind"] == "mechanical"
    assert _events(rows["validator_test_script"], "command_start") == []
    assert rows["validator_run_test_script"].status == "succeeded"
    assert [line["purpose"] for line in _events(rows["validator_run_test_script"], "command_start")] == ["node"]


def test_any_command_naming_the_script_counts_as_running_it():
    manifest = {"nodes": [_script_node(), {"node_id": "qa", "task_prompt": "Check.", "judgment": {
        "kind": "command", "command": ["bash", "-c", "python3 ./validator_test_script.py && make lint"]}}]}

    assert validator_script_command(_script_node(), org_node="validator", manifest=manifest) is None
    assert validator_script_command(_script_node(), org_node="validator", manifest={"nodes": [_script_node()]}) == [
        "python3", "validator_test_script.py"]


def test_only_the_validators_test_script_nodes_are_run():
    manifest = {"nodes": [_script_node()]}

    assert validator_script_command(_script_node(), org_node="coder", manifest=manifest) is None
    assert validator_script_command({**_script_node(), "node_type": "final_verdict"}, org_node="validator",
                                    manifest=manifest) is None


def test_a_node_id_that_is_no_plain_file_name_is_saved_under_one():
    assert validator_script_file("../checks/run all") == "_checks_run_all.py"
