"""Worktrees of one repository are added and removed one at a time, by every thread and process of
the machine: git fails an add or removal that runs beside another (it reads the other worktrees'
administrative files half-written)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import connection

from graphs.workspaces import run_head_checkout, run_workspace_ensure, worktrees_locked
from tests.graphs import planned_run
from tests.repos import git


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
def test_a_worktree_is_added_only_once_the_repository_lock_is_free(repo, repo_task):
    run = planned_run(repo_task, {"nodes": [], "edges": []})
    run_workspace_ensure(run)
    seen: dict[str, object] = {}
    done = threading.Event()

    with worktrees_locked(repo):
        thread = _checkout_in_thread(run, "waiting", seen, done)
        assert not done.wait(timeout=1.0)
        assert "waiting" not in git(repo, "worktree", "list")
    thread.join(timeout=30)

    assert done.is_set() and isinstance(seen["waiting"], Path)
    assert not seen["waiting"].exists()  # added once the lock was free, then removed


@pytest.mark.django_db(transaction=True)
def test_many_checkouts_of_one_repository_at_once_all_succeed(repo, repo_task):
    run = planned_run(repo_task, {"nodes": [], "edges": []})
    run_workspace_ensure(run)
    seen: dict[str, object] = {}
    names = [f"look-{number}" for number in range(6)]
    threads = [_checkout_in_thread(run, name, seen, threading.Event()) for name in names]
    for thread in threads:
        thread.join(timeout=60)

    assert all(isinstance(seen[name], Path) for name in names), seen
    assert git(repo, "worktree", "list").count("\n") == 1  # only the repository's own is left
