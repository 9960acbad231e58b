"""A hostile agent reads its git and tries to write it: every plant through the read-only view — the
repository's configuration (a file-system monitor, a hooks folder, an external diff, a filter), hooks,
refs, packed refs, alternates, attributes, the worktree's HEAD and index, a hard link, a writable
remount, ``git add`` and ``commit`` — is refused, and the console's git commits the change as the console
sees it, running none of the agent's programs. The agent is ``tests/hostile_claude.py`` in the real
sandbox, through the real claude runner (tests/hostile_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.models import AttemptChange
from tests.hostile_runs import escapes_found, project_files, run_branch_unmoved
from tests.repos import git

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db]


def _repository_state(repo: Path) -> dict[str, object]:
    """What of the repository's git directory the console's git obeys or reads and no attempt may change."""
    common = repo / ".git"
    return {
        "config": (common / "config").read_bytes(),
        "hooks": sorted(path.name for path in (common / "hooks").iterdir()),
        "info": {path.name: path.read_bytes() for path in (common / "info").iterdir()},
        "packed-refs": (common / "packed-refs").exists(),
        "alternates": (common / "objects" / "info" / "alternates").exists(),
        "index": (common / "index").read_bytes(),
        "refs": git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/main", "refs/heads/planted"),
    }


def test_every_plant_through_the_read_only_view_is_refused_and_the_console_commits_what_it_sees(hostile, repo,
                                                                                               tmp_path):
    marker = tmp_path / "payload-ran"
    before = _repository_state(repo), project_files(repo)

    row = hostile("plant_git", marker=str(marker))

    tried = json.loads(escapes_found(row)["plant_git"])
    assert tried.pop("git log") == "ran", "the agent's git could not read the repository: the test would prove nothing"
    assert len(tried) == 21
    assert not [name for name, result in tried.items() if not result.startswith("refused: ")], tried
    assert "Read-only file system" in tried["config"] and "Read-only file system" in tried["git add"]
    assert tried["hard link to the index"] == "refused: Invalid cross-device link"
    assert row.status == "succeeded"
    assert not marker.exists(), "the console's git ran a program the agent planted"
    assert (_repository_state(repo), project_files(repo)) == before
    change = AttemptChange.objects.get(node_exec=row)
    assert {entry["path"] for entry in change.files} == {"README.md", ".gitattributes", "payload.sh"}
    # Committed as it is: no skip-worktree bit hid it, no filter rewrote it.
    assert git(repo, "show", f"{change.result_commit}:README.md").endswith("three\na line the agent added\n")


def test_a_git_file_pointed_at_the_repositorys_own_git_commits_nothing_there_and_fails_tampered(hostile, repo):
    before = _repository_state(repo), project_files(repo)

    row = hostile("retarget_git")

    tried = json.loads(escapes_found(row)["retarget_git"])
    assert tried["git add"].startswith("refused: ") and "Read-only file system" in tried["git add"]
    assert tried["git commit"].startswith("refused: ")
    assert row.status == "failed"
    assert row.judgment_result["kind"] == "workspace_tampered"
    [issue] = row.judgment_result["issues"]
    assert "the worktree's .git file was rewritten" in issue
    assert run_branch_unmoved(row)
    assert (_repository_state(repo), project_files(repo)) == before
