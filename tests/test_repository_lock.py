"""A repository's worktrees are added and removed, and its run branches made, one at a time by every
thread and process of the machine: git fails a worktree add or removal that runs beside another (it
reads the other worktrees' administrative files half-written), and two attempts making their run's
branch at once meet on its ref lock. Landings on a run's branch take turns too, each building on the
head it finds."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from graphs.models import AttemptChange, WorkNodeExecution
from graphs.workspaces import worktrees
from graphs.workspaces.git import REPOSITORY_LOCK_NAME, WorkspaceError, branch_landing_locked, repository_locked
from graphs.workspaces.worktrees import attempt_workspace, run_head_checkout, run_workspace_ensure, workspace_land
from tests.repos import git
from tests.run_builders import node, planned_run


def _checkout_in_thread(run, name: str, seen: dict[str, object], done: threading.Event) -> threading.Thread:
    def check_out() -> None:
        try:
            with run_head_checkout(run, name=name) as head:
                seen[name] = head
        except Exception as error:  # reported to the test, which asserts there was none
            seen[name] = error
        finally:
            connection.close()
            done.set()

    thread = threading.Thread(target=check_out)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_a_worktree_is_added_only_once_the_repository_lock_is_free(repo, repo_task, settings):
    settings.WORKGRAPH_WORKTREE_POOL_SIZE = 0  # every checkout adds a worktree and removes it
    run = planned_run(repo_task, {"nodes": [], "edges": []})
    run_workspace_ensure(run)
    seen: dict[str, object] = {}
    done = threading.Event()

    with repository_locked(repo):
        thread = _checkout_in_thread(run, "waiting", seen, done)
        assert not done.wait(timeout=1.0)
        assert "waiting" not in git(repo, "worktree", "list")
    thread.join(timeout=30)

    assert done.is_set() and isinstance(seen["waiting"], Path)
    assert not seen["waiting"].exists()  # added once the lock was free, then removed


@pytest.mark.django_db(transaction=True)
def test_many_checkouts_of_one_repository_at_once_all_succeed(repo, repo_task, settings):
    settings.WORKGRAPH_WORKTREE_POOL_SIZE = 2
    run = planned_run(repo_task, {"nodes": [], "edges": []})
    run_workspace_ensure(run)
    seen: dict[str, object] = {}
    names = [f"look-{number}" for number in range(6)]
    threads = [_checkout_in_thread(run, name, seen, threading.Event()) for name in names]
    for thread in threads:
        thread.join(timeout=60)

    assert all(isinstance(seen[name], Path) for name in names), seen
    # Left: the repository's own and at most the pool's two; the checkouts beyond those were removed.
    assert git(repo, "worktree", "list").count("\n") <= 3


@pytest.mark.django_db
def test_a_run_branch_made_meanwhile_by_another_attempt_is_taken_as_it_is(repo, repo_task):
    run = planned_run(repo_task, {"nodes": [], "edges": []})
    branch = f"workgraph/run-{run.run_id.hex[:8]}"
    head = git(repo, "rev-parse", "main").strip()
    git(repo, "branch", branch, head)

    workspace = run_workspace_ensure(run)

    assert (workspace.branch, workspace.base_commit) == (branch, head)
    assert git(repo, "rev-parse", branch).strip() == head


@pytest.mark.django_db
def test_a_run_branch_git_cannot_make_is_a_workspace_error_with_what_git_said(repo, repo_task):
    git(repo, "branch", "workgraph")  # refs/heads/workgraph is a file: no branch can live under it
    run = planned_run(repo_task, {"nodes": [], "edges": []})

    with pytest.raises(WorkspaceError, match=r"could not create the branch workgraph/run-\w+: .*refs/heads/workgraph"):
        run_workspace_ensure(run)


@pytest.mark.django_db
def test_a_base_ref_that_names_no_commit_is_a_workspace_error_naming_it(repo, repo_task):
    repo_task.project.base_ref = "no-such-ref"
    repo_task.project.save(update_fields=["base_ref"])
    run = planned_run(repo_task, {"nodes": [], "edges": []})

    with pytest.raises(WorkspaceError, match=f"no-such-ref names no commit in {repo}"):
        run_workspace_ensure(run)


@pytest.mark.django_db
def test_a_lock_file_that_cannot_be_opened_is_a_workspace_error_naming_it(repo, repo_task):
    (repo / ".git" / REPOSITORY_LOCK_NAME).mkdir()  # what open() fails on even for root
    run = planned_run(repo_task, {"nodes": [], "edges": []})

    with pytest.raises(WorkspaceError, match=f"could not open the repository's lock file {repo}/.git/workgraph.lock"):
        run_workspace_ensure(run)


@pytest.mark.django_db(transaction=True)
def test_a_landing_waits_its_turn_on_the_branch_and_builds_on_the_head_it_then_finds(repo, repo_task, monkeypatch):
    monkeypatch.setattr(worktrees, "_LAND_TRIES", 1)  # no second try: the turn alone must make it land
    run = planned_run(repo_task, {"nodes": [node("b")], "edges": []})
    branch = run_workspace_ensure(run).branch
    execution = WorkNodeExecution.objects.create(run=run, node_id="b", subagent_type="coder", attempt=1,
                                                 status="running", started_at=timezone.now())
    seen: dict[str, object] = {}
    done = threading.Event()

    with attempt_workspace(execution) as workspace:
        (workspace.path / "b.txt").write_text("b\n")

        def land() -> None:
            try:
                seen["change"] = workspace_land(workspace, execution)
            except Exception as error:  # reported to the test, which asserts there was none
                seen["change"] = error
            finally:
                connection.close()
                done.set()

        with branch_landing_locked(repo, branch):
            thread = threading.Thread(target=land)
            thread.start()
            assert not done.wait(timeout=1.0)
            # Another landing's turn: the branch moves while this one waits.
            head = git(repo, "rev-parse", branch).strip()
            moved = git(repo, "commit-tree", f"{head}^{{tree}}", "-p", head, "-m", "landed meanwhile").strip()
            git(repo, "update-ref", f"refs/heads/{branch}", moved, head)
        thread.join(timeout=60)

    assert isinstance(seen["change"], AttemptChange), seen
    tip = git(repo, "rev-parse", branch).strip()
    assert tip == seen["change"].merge_commit
    git(repo, "merge-base", "--is-ancestor", moved, tip)  # built on the head it found; raises otherwise
    assert git(repo, "show", f"{tip}:b.txt") == "b\n"
