"""A worker killed after its attempt's change landed on the run's branch, before the console recorded it:
the node's retry finds that landing, records it as the lost attempt's, and does not land the node again
(the retry's own change is kept on its ref). The chaos suite's kill "after-landing" meets this window in
a real run (tests/reliability/chaos_worker_kills.py); here it is made step by step."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from graphs.domain.judgments import Judgment
from graphs.engine.changes import change_land
from graphs.logs.store import log_file_open, log_read
from graphs.models import AttemptChange, RunWorkspace, WorkGraphRun, WorkNodeExecution
from graphs.workspaces import worktrees
from graphs.workspaces.worktrees import AttemptWorkspace, attempt_workspace
from tests.repos import git
from tests.run_builders import edges_for, node, planned_run


def _attempt(run, number: int, status: str) -> WorkNodeExecution:
    execution = WorkNodeExecution.objects.create(run=run, node_id="build", subagent_type="planner", attempt=number,
                                                 status=status, cause="initial" if number == 1 else "transient_retry")
    log_file_open(execution=execution)
    return execution


@pytest.fixture
def run(repo_task) -> WorkGraphRun:
    """A planned run of the one node ``build``, on the task's repository."""
    nodes = [node("build")]
    return planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})


@contextmanager
def _feature_written(execution: WorkNodeExecution, value: int) -> Iterator[AttemptWorkspace]:
    """The attempt's workspace, its ``feature.py`` written with ``value``: each attempt changes the same file."""
    with attempt_workspace(execution) as workspace:
        (workspace.path / "feature.py").write_text(f"FEATURE = {value}\n")
        yield workspace


def _landed_subjects(run) -> list[str]:
    workspace = RunWorkspace.objects.get(run=run)
    log = git(Path(workspace.repository), "log", "--no-merges", "--format=%s",
              f"{workspace.base_commit}..{workspace.branch}")
    return log.splitlines()


@pytest.mark.django_db
def test_a_retry_records_the_landing_its_lost_attempt_made_and_does_not_land_again(run):
    lost = _attempt(run, 1, "running")
    with _feature_written(lost, 1) as workspace:
        # What a worker does before it dies: the change committed, the branch moved, nothing recorded.
        result = worktrees._commit(workspace, lost)
        head = worktrees._branch_land(workspace.run_workspace, base=workspace.base_commit, result=result,
                                      execution=lost)
    WorkNodeExecution.objects.filter(pk=lost.pk).update(status="failed", error="worker w:1:1 stopped")
    retry = _attempt(run, 2, "running")

    with _feature_written(retry, 2) as workspace:
        judgment = change_land(workspace, retry, Judgment(ok=True, kind="agent"))

    assert judgment.ok
    assert _landed_subjects(run) == ["build attempt 1"]
    recovered = AttemptChange.objects.get(node_exec=lost)
    assert (recovered.result_commit, recovered.merge_commit) == (result, head)
    assert [entry["path"] for entry in recovered.files] == ["feature.py"]
    kept = AttemptChange.objects.get(node_exec=retry)
    assert kept.merge_commit == "" and kept.ref == f"refs/workgraph/attempts/{retry.pk}"
    [line] = [line for line in log_read(log_file=retry.log_file) if line["event"] == "change_landed_before"]
    assert (line["attempt"], line["commit"], line["merge"]) == (1, result, head)


@pytest.mark.django_db
def test_a_retry_after_an_attempt_lost_before_its_landing_lands_its_own_change(run):
    lost = _attempt(run, 1, "failed")
    with _feature_written(lost, 1) as workspace:
        worktrees._commit(workspace, lost)  # committed in its worktree; the worker died before the landing
    retry = _attempt(run, 2, "running")

    with _feature_written(retry, 2) as workspace:
        change_land(workspace, retry, Judgment(ok=True, kind="agent"))

    assert _landed_subjects(run) == ["build attempt 2"]
    assert AttemptChange.objects.get(node_exec=retry).merge_commit
    assert not AttemptChange.objects.filter(node_exec=lost).exists()


@pytest.mark.django_db
def test_a_retry_after_an_attempt_lost_once_its_landing_was_recorded_does_not_land_again(run):
    lost = _attempt(run, 1, "running")
    with _feature_written(lost, 1) as workspace:
        landed = worktrees.workspace_land(workspace, lost)  # landed and recorded; the attempt never finished
    WorkNodeExecution.objects.filter(pk=lost.pk).update(status="failed", error="worker w:1:1 stopped")
    retry = _attempt(run, 2, "running")

    with _feature_written(retry, 2) as workspace:
        change_land(workspace, retry, Judgment(ok=True, kind="agent"))

    assert _landed_subjects(run) == ["build attempt 1"]
    assert AttemptChange.objects.get(node_exec=retry).merge_commit == ""
    [line] = [line for line in log_read(log_file=retry.log_file) if line["event"] == "change_landed_before"]
    assert (line["attempt"], line["merge"]) == (1, landed.merge_commit)


@pytest.mark.django_db
def test_a_loop_back_after_a_success_lands_its_change_again(run):
    first = _attempt(run, 1, "running")
    with _feature_written(first, 1) as workspace:
        worktrees.workspace_land(workspace, first)
    WorkNodeExecution.objects.filter(pk=first.pk).update(status="succeeded")
    again = _attempt(run, 2, "running")

    with _feature_written(again, 2) as workspace:
        change_land(workspace, again, Judgment(ok=True, kind="agent"))

    assert _landed_subjects(run) == ["build attempt 2", "build attempt 1"]
