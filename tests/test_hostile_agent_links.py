"""A hostile agent changes files where a watch of names would not see it: a tracked file through a hard link
it then removes, another through a shared mapping written after its file is closed. Both changes land,
whichever way the console stages (its pooled worktree watched, or the git CLI), and the worktree given
back is clean at the landed commit. A hard link from outside the worktree cannot be made at all: the
sandbox binds the worktree on a mount of its own, and ``link(2)`` across mounts is refused. The agent is
``tests/hostile_claude.py`` in the real sandbox, through the real claude runner (tests/hostile_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.models import AttemptChange
from graphs.workspaces import libgit
from graphs.workspaces.pool import pool_folder
from tests.hostile_runs import escapes_found
from tests.repos import git

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db]


def test_changes_through_a_removed_hard_link_and_a_mapping_land_and_leave_the_worktree_clean(
        hostile, repo, tmp_path, settings, monkeypatch):
    settings.WORKGRAPH_WORKSPACE_DIR = tmp_path / "workspaces"
    watched: list[bool] = []
    real = libgit.touched_staged

    def recorded(*args, **kwargs):
        watched.append(real(*args, **kwargs))
        return watched[-1]

    monkeypatch.setattr(libgit, "touched_staged", recorded)

    row = hostile("link_and_map")

    tried = json.loads(escapes_found(row)["link_and_map"])
    assert tried["hard link from home"] == "refused: Invalid cross-device link"
    assert row.status == "succeeded"
    change = AttemptChange.objects.get(node_exec=row)
    assert {entry["path"] for entry in change.files} == {"src/app.py", "README.md"}
    assert git(repo, "show", f"{change.result_commit}:src/app.py").endswith("# through another name\n")
    assert git(repo, "show", f"{change.result_commit}:README.md").startswith("ONE\n")
    # Staged from what the watch saw, not a walk, where the console stages in-process.
    assert watched == ([True] if settings.WORKGRAPH_GIT_BACKEND == "auto" else [])
    slot = pool_folder(Path(settings.WORKGRAPH_WORKSPACE_DIR), repo)
    assert (slot / "0.clean").read_text() == change.result_commit
    assert git(slot / "0", "status", "--porcelain", "--ignored", "--untracked-files=all") == ""
    assert git(slot / "0", "rev-parse", "HEAD").strip() == change.result_commit
