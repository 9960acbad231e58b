"""A full disk under an attempt is the machine's trouble, not the node's: the attempt fails naming it and is
retried after a backoff, as after an outage, and the retry lands once space is back. The chaos suite fills
a real tmpfs under a run (tests/reliability/chaos_services.py); here the workspace says so once."""

from __future__ import annotations

import errno
from types import SimpleNamespace

import pytest
from django.db import OperationalError

from graphs.agents import AgentError
from graphs.agents.offline import _file_write
from graphs.engine import attempt as attempt_module
from graphs.engine import changes, run_start
from graphs.workspaces import disk
from graphs.workspaces.disk import DISK_FULL, DiskFullError, disk_full_named, disk_full_reason
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
    rows = _build_retried_once(repo_task, scripted_runner, inline_executor)
    assert failing.all_raised
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
    monkeypatch.setattr(disk, "DISK_FULL_BYTES", 1 << 62)
    rows = _build_retried_once(repo_task, scripted_runner, inline_executor)
    assert rows[0].error.startswith(f"internal error: RuntimeError('failed to write out file'); {DISK_FULL}: ")


def test_the_offline_agent_calls_a_full_disk_a_passing_outage(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("graphs.agents.offline.tempfile.mkstemp", full)
    with pytest.raises(AgentError) as raised:
        _file_write(tmp_path / "script.py", "print(1)\n")
    assert (raised.value.kind, raised.value.transient) == ("unavailable", True)
    assert "No space left on device" in str(raised.value)


class _Disk:
    """The workspace filesystems' free space as ``disk_usage`` reads it: ``free`` bytes on every one."""

    def __init__(self, free: int) -> None:
        self.free = free

    def disk_usage(self, folder) -> SimpleNamespace:
        return SimpleNamespace(free=self.free)


UNWRITTEN = "git write-tree failed: fatal: unable to write new index file"


@pytest.mark.django_db
def test_a_full_disk_is_named_where_the_attempt_fails_though_space_is_back_before_it_is_recorded(
        repo_task, scripted_runner, inline_executor, monkeypatch):
    # As on a machine: the attempt's failure (in words that are not ENOSPC's) met a full disk, and space came
    # back — its worktree given back, another attempt's removed, the filler deleted — before it was recorded.
    space = _Disk(free=0)
    monkeypatch.setattr(disk, "shutil", space)
    failing = FailingFirst(changes.workspace_land, WorkspaceError(UNWRITTEN))
    monkeypatch.setattr(changes, "workspace_land", failing)
    record = attempt_module.attempt_workspace_failed

    def recorded_once_space_is_back(execution, **kwargs):
        space.free = 1 << 40
        record(execution, **kwargs)

    monkeypatch.setattr(attempt_module, "attempt_workspace_failed", recorded_once_space_is_back)
    rows = _build_retried_once(repo_task, scripted_runner, inline_executor)
    assert failing.all_raised
    assert rows[0].error.startswith(f"workspace error: {UNWRITTEN}; {DISK_FULL}: 0 bytes free on the filesystem of ")


@pytest.mark.django_db
def test_a_node_out_of_retries_on_a_full_disk_fails_the_run_naming_it(repo_task, scripted_runner, inline_executor,
                                                                        monkeypatch):
    monkeypatch.setattr(disk, "shutil", _Disk(free=4096))
    monkeypatch.setattr(changes, "workspace_land", FailingFirst(changes.workspace_land, WorkspaceError(UNWRITTEN)))
    scripted_runner.replies[("node", "build")] = writes("feature.py", "FEATURE = True\n")
    nodes = [node("build", retry_policy={"max_retries": 0})]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error == f"nodes that did not succeed: build; {DISK_FULL} under build"


@pytest.mark.parametrize(("error", "reason"), [
    (WorkspaceError("git add failed: error: unable to write file"), ""),
    (OSError(errno.EDQUOT, "Disk quota exceeded"), f"{DISK_FULL} (EDQUOT)"),
    (RuntimeError("fatal: cannot write: Disk quota exceeded"), DISK_FULL),
    (RuntimeError("failed to write out file"), ""),
])
def test_a_failure_is_a_full_disk_by_its_errno_or_the_systems_words_on_a_roomy_disk(error, reason, tmp_path):
    assert disk_full_reason(error, [tmp_path]) == reason


def test_a_failure_on_a_filesystem_without_room_is_a_full_disk_whatever_it_says(tmp_path, monkeypatch):
    monkeypatch.setattr(disk, "shutil", _Disk(free=8192))
    assert disk_full_reason(RuntimeError("failed to write out file"), [None, tmp_path]) == (
        f"{DISK_FULL}: 8192 bytes free on the filesystem of {tmp_path}")


def test_a_failure_raised_by_what_it_caused_is_a_full_disk_by_its_cause(tmp_path):
    try:
        try:
            raise OSError(errno.ENOSPC, DISK_FULL)
        except OSError as cause:
            raise WorkspaceError("the worktree could not be added") from cause
    except WorkspaceError as error:
        assert disk_full_reason(error, [tmp_path]) == f"{DISK_FULL} (ENOSPC)"


def test_a_block_failing_on_a_full_disk_raises_it_named_and_a_lost_database_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setattr(disk, "shutil", _Disk(free=0))
    with pytest.raises(DiskFullError) as raised, disk_full_named([tmp_path]):
        raise WorkspaceError(UNWRITTEN)
    assert str(raised.value) == f"{UNWRITTEN}; {DISK_FULL}: 0 bytes free on the filesystem of {tmp_path}"
    assert isinstance(raised.value.__cause__, WorkspaceError)
    with pytest.raises(OperationalError), disk_full_named([tmp_path]):
        raise OperationalError("the server closed the connection")
    monkeypatch.setattr(disk, "shutil", _Disk(free=1 << 40))
    with pytest.raises(WorkspaceError) as raised, disk_full_named([tmp_path]):
        raise WorkspaceError("refs/heads/x names no commit")
    assert type(raised.value) is WorkspaceError


def _build_retried_once(repo_task, scripted_runner, inline_executor) -> list:
    """Run a one-node run whose node writes a feature file; it succeeds on its second attempt, a transient
    retry of the first, which failed. Its attempts, in order."""
    scripted_runner.replies[("node", "build")] = writes("feature.py", "FEATURE = True\n")
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
    return rows
