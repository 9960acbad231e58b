"""The seed's backend-test DAG spec imports and runs to the end with the offline agent: its review
answers with a verdict its gate lets through, and its shell step runs in the run's worktree."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs.engine import run_start
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, RunWorkspace, WorkGraphRun
from graphs.planning.dag_specs import dag_spec_import
from tests.dag_specs import backend_test_prompt_files, backend_test_spec
from tests.repos import git
from tests.run_builders import latest

EXECUTE = "execute-backend-pytest-shell"
# What the fixture repository can run in place of the seed's pytest call (it has no test suite): the
# same shape of step, a report written under reports/ and the run's files read from the working folder.
FIXTURE_COMMANDS = ["mkdir -p reports", "ls src > reports/backend-test-report.txt", "cat README.md"]


@pytest.fixture
def repo_project(project, repo):
    project.target_folder = str(repo)
    project.save(update_fields=["target_folder"])
    return project


def _imported(project, alice) -> WorkGraphRun:
    spec = backend_test_spec()
    execute = next(task for task in spec["tasks"] if task["id"] == EXECUTE)
    execute["shell"]["commands"] = FIXTURE_COMMANDS
    return dag_spec_import(project=project, spec=spec, prompt_files=backend_test_prompt_files(), imported_by=alice)


def _events(row, event: str) -> list[dict]:
    return [line for line in log_read(log_file=ExecutionLogFile.objects.get(node_exec=row)) if line["event"] == event]


@pytest.mark.django_db(transaction=True)
def test_the_backend_test_spec_runs_end_to_end_with_its_shell_step_in_the_runs_worktree(
    repo_project, alice, commands_allowed, inline_executor, repo
):
    run = _imported(repo_project, alice)
    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    rows = latest(run)
    assert {node_id: row.status for node_id, row in rows.items()} == dict.fromkeys(
        [node["node_id"] for node in run.graph_manifest["nodes"]], "succeeded")
    assert rows["review-backend-cases-pi"].output_payload["text"].startswith("VERDICT: pass\n")
    gate = rows["review-backend-cases-gate-shell"]
    assert (gate.judgment_result["kind"], gate.judgment_result["ok"]) == ("mechanical", True)
    assert _events(gate, "agent_call") == []

    execute = rows[EXECUTE]
    [start] = _events(execute, "command_start")
    assert start["argv"] == ["sh", "-e", "-c", "\n".join(FIXTURE_COMMANDS)]
    assert Path(start["cwd"]) != repo and not Path(start["cwd"]).is_relative_to(repo)
    assert execute.output_payload["text"] == "one\ntwo\nthree\n"
    workspace = RunWorkspace.objects.get(run=run)
    assert git(repo, "show", f"{workspace.branch}:reports/backend-test-report.txt") == "app.py\n"
    # The repository's own checkout is untouched: the step worked in the run's worktree.
    assert not (repo / "reports").exists()


@pytest.mark.django_db(transaction=True)
def test_without_allow_commands_the_shell_step_does_not_run_and_says_why(repo_project, alice, inline_executor):
    run = _imported(repo_project, alice)
    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "failed"
    rows = latest(run)
    assert rows["review-backend-cases-gate-shell"].status == "succeeded"  # a gate runs no command
    assert rows[EXECUTE].error.startswith("commands_disabled: the project does not allow commands")
    assert "a project admin can turn on allow_commands" in rows[EXECUTE].error
    assert rows["test-retrospect-pi"].status == "blocked"
