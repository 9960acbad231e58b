"""A landed change lists its files as git names them — a name with a tab, spaces or accents, a deleted
file, a binary one, one whose mode alone changed — with their line counts, beside its whole diff."""

from __future__ import annotations

import os

import pytest
from django.utils import timezone

from graphs.models import WorkNodeExecution
from graphs.workspaces.worktrees import attempt_workspace, workspace_land
from tests.repos import git
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


def test_a_landed_change_lists_every_file_git_names_with_its_counts(repo, repo_task):
    run = planned_run(repo_task, {"nodes": [node("n")], "edges": []})
    execution = WorkNodeExecution.objects.create(run=run, node_id="n", subagent_type="planner", attempt=1,
                                                 status="running", started_at=timezone.now())
    with attempt_workspace(execution) as workspace:
        (workspace.path / "tab\tand space.py").write_text("a = 1\nb = 2\n")
        (workspace.path / "café.md").write_text("crème\n")
        (workspace.path / "blob.bin").write_bytes(b"\0\1\2")
        (workspace.path / "README.md").unlink()
        os.chmod(workspace.path / "src" / "app.py", 0o755)
        change = workspace_land(workspace, execution)

    # In git's order: by the bytes of each path.
    assert change.files == [
        {"path": "README.md", "added": 0, "removed": 3, "binary": False},
        {"path": "blob.bin", "added": 0, "removed": 0, "binary": True},
        {"path": "café.md", "added": 1, "removed": 0, "binary": False},
        {"path": "src/app.py", "added": 0, "removed": 0, "binary": False},
        {"path": "tab\tand space.py", "added": 2, "removed": 0, "binary": False},
    ]
    expected = git(repo, "diff", "--no-renames", change.base_commit, change.result_commit)
    assert change.diff == expected
    assert change.diff_bytes == len(expected.encode())
