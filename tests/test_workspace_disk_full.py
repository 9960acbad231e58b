"""A full disk under an attempt is the machine's trouble, not the node's: the attempt fails naming it and is
retried after a backoff, as after an outage, and the retry lands once space is back. The chaos suite fills
a real tmpfs under a run (tests/reliability/chaos_services.py); here the workspace says so once."""

from __future__ import annotations

import errno

import pytest

from graphs.agents import AgentError
from graphs.agents.offline import _file_write
from graphs.engine import attempt as attempt_module
from graphs.engine import on_fail, run_start
from graphs.workspaces.worktrees import WorkspaceError
from tests.faults import FailingFirst
from tests.repos import writes
from tests.run_builders import edges_for, node, node_rows, planned_run

FULL = "git add failed: error: unable to write file: No space left on device"


@pytest.mark.django_db
def test_an_attempt_that_meets_a_full_disk_is_retried_and_lands(repo_task, scripted_runner, inline_executor,
                                                                  monkeypatch):
    failing = FailingFirst(attempt_module.attempt_workspace, WorkspaceError(FULL))
    monkeypatch.setattr(attempt_module, "attempt_workspace", failing)
    scripted_runner.replies[("node", "build")] = writes("feature.py", "FEATURE = True\n")
    nodes = [node("build")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    assert failing.all_raised
    assert run.status == "succeeded", run.error
    rows = list(node_rows(run).order_by("attempt"))
    assert [(row.attempt, row.cause, row.status) for row in rows] == [
        (1, "initial", "failed"), (2, "transient_retry", "succeeded")
    ]
    assert rows[0].error == f"workspace error: {FULL}"
    assert rows[1].change.merge_commit


@pytest.mark.django_db
def test_any_other_workspace_error_fails_the_node_for_good(repo_task, scripted_runner, inline_executor, monkeypatch):
    failing = FailingFirst(attempt_module.attempt_workspace, WorkspaceError("refs/heads/x names no commit"))
    monkeypatch.setattr(attempt_module, "attempt_workspace", failing)
    nodes = [node("build")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "failed"
    assert [(row.attempt, row.status) for row in node_rows(run)] == [(1, "failed")]


@pytest.mark.django_db
def test_an_error_of_its_own_kind_on_a_full_disk_is_retried_too(repo_task, scripted_runner, inline_executor,
                                                                  monkeypatch):
    # libgit2 says "failed to write out file" in an error of its own; the filesystem says it is full.
    failing = FailingFirst(attempt_module.attempt_workspace, RuntimeError("failed to write out file"))
    monkeypatch.setattr(attempt_module, "attempt_workspace", failing)
    monkeypatch.setattr(on_fail, "DISK_FULL_BYTES", 1 << 62)
    nodes = [node("build")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    rows = list(node_rows(run).order_by("attempt"))
    assert [(row.attempt, row.cause, row.status) for row in rows] == [
        (1, "initial", "failed"), (2, "transient_retry", "succeeded")
    ]
    assert rows[0].error == "internal error: RuntimeError('failed to write out file')"


def test_the_offline_agent_calls_a_full_disk_a_passing_outage(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("graphs.agents.offline.tempfile.mkstemp", full)
    with pytest.raises(AgentError) as raised:
        _file_write(tmp_path / "script.py", "print(1)\n")
    assert (raised.value.kind, raised.value.transient) == ("unavailable", True)
    assert "No space left on device" in str(raised.value)
