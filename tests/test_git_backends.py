"""An attempt's change lands the same through libgit2 as through the git CLI: the same tree, commit message,
author and committer, parents and refs, the same conflict and the same nothing for an empty change. The
libgit2 path is taken where it stages as git does and the CLI elsewhere (a converting attribute, a setting
libgit2 reads otherwise, a nested repository, ``WORKGRAPH_GIT_BACKEND=cli``); and on the libgit2 path no
hook, file-system monitor or filter the repository names ever runs."""

from __future__ import annotations

import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from django.utils import timezone

from graphs.models import WorkNodeExecution
from graphs.workspaces import worktrees
from graphs.workspaces.libgit import _configuration_allows
from graphs.workspaces.worktrees import MergeConflictError, attempt_workspace, workspace_changed_paths, workspace_land
from tests import factories
from tests.repos import git, repository_create
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def staging(monkeypatch) -> list[bool]:
    """Whether each staging of the landings went through libgit2 (True) or was left to the CLI (False)."""
    seen: list[bool] = []
    real = worktrees.staged

    def spied(worktree):
        found = real(worktree)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(worktrees, "staged", spied)
    return seen


@pytest.fixture(autouse=True)
def same_start(monkeypatch):
    """The tests' own commits at a fixed moment, so the repositories of both paths start at one commit."""
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, "2026-01-01T00:00:00+00:00")


@pytest.fixture(autouse=True)
def fresh_configuration():
    # Each test makes repositories of its own, some at a path an earlier test's had.
    _configuration_allows.cache_clear()
    yield
    _configuration_allows.cache_clear()


def _attempt(repo: Path, alice, node_id: str = "build") -> WorkNodeExecution:
    task = factories.TaskFactory(project=factories.ProjectFactory(target_folder=str(repo)), created_by=alice)
    run = planned_run(task, {"nodes": [node(node_id)], "edges": []})
    return _execution(run, node_id)


def _execution(run, node_id: str) -> WorkNodeExecution:
    return WorkNodeExecution.objects.create(run=run, node_id=node_id, subagent_type="planner", attempt=1,
                                            status="running", started_at=timezone.now())


def _commit_text(repo: Path, commit: str) -> str:
    """A commit object as git stores it, its times taken out (a landing's are the moment it landed)."""
    text = git(repo, "cat-file", "commit", commit)
    return re.sub(r"^(author|committer) (.*) \d+ [+-]\d{4}$", r"\1 \2 <time>", text, flags=re.MULTILINE)


def _landed(tmp_path: Path, backend: str, settings, alice, change: Callable[[Path], None],
            prepare: Callable[[Path], None] = lambda repo: None) -> dict[str, object]:
    """What landing ``change`` on a fresh repository (``prepare``d first) leaves with ``backend``."""
    settings.WORKGRAPH_GIT_BACKEND = backend
    repo = repository_create(tmp_path / backend)
    prepare(repo)
    execution = _attempt(repo, alice)
    with attempt_workspace(execution) as workspace:
        change(workspace.path)
        paths = workspace_changed_paths(workspace)
        landed = workspace_land(workspace, execution)
        head = git(workspace.path, "rev-parse", "HEAD").strip()
        # The test's own look runs none of the programs a repository may name either.
        status = git(workspace.path, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "status",
                     "--porcelain", "--untracked-files=all")
    branch = landed.run.workspace.branch
    result = landed.result_commit
    return {
        "paths": paths, "files": landed.files, "diff": landed.diff, "status": status,
        "tree": git(repo, "rev-parse", f"{result}^{{tree}}").strip() if result else "",
        "commit": _commit_text(repo, result) if result else "",
        "worktree head is the commit": head == (result or landed.base_commit),
        "branch is the commit": git(repo, "rev-parse", branch).strip() == (result or landed.base_commit),
        "refs": git(repo, "for-each-ref", "--format=%(refname)").replace(landed.run.run_id.hex[:8], "<run>"),
    }


def _edits(worktree: Path) -> None:
    (worktree / "README.md").write_text("one\ntwo\nthree\nfour\n")
    (worktree / "src" / "app.py").unlink()
    (worktree / "docs").mkdir()
    (worktree / "docs" / "guide.md").write_text("# Guide\n")
    (worktree / "docs" / "run.sh").write_text("#!/bin/sh\n")
    (worktree / "docs" / "run.sh").chmod(0o755)
    (worktree / "docs" / "latest").symlink_to("guide.md")
    (worktree / ".gitignore").write_text("*.log\n")
    (worktree / "debug.log").write_text("ignored\n")


def test_a_change_lands_the_same_through_libgit2_as_through_the_cli(tmp_path, settings, alice, staging):
    cli = _landed(tmp_path, "cli", settings, alice, _edits)
    assert staging == [False, False]
    staging.clear()

    native = _landed(tmp_path, "auto", settings, alice, _edits)

    assert staging == [True, True]
    assert native == cli
    assert native["paths"] == [".gitignore", "README.md", "docs/guide.md", "docs/latest", "docs/run.sh", "src/app.py"]
    assert native["worktree head is the commit"] and native["branch is the commit"] and native["status"] == ""
    assert "author Work Graph Console <workgraph@localhost> <time>\n" in native["commit"]
    assert native["commit"].endswith("\nbuild attempt 1\n")


def test_an_empty_change_commits_nothing_on_either_path(tmp_path, settings, alice, staging):
    for backend in ("cli", "auto"):
        landed = _landed(tmp_path, backend, settings, alice, lambda worktree: None)
        assert landed["tree"] == "" and landed["paths"] == [] and landed["branch is the commit"]
    assert staging == [False, False, True, True]


@pytest.mark.parametrize("backend", ["auto", "cli"])
def test_a_conflict_names_the_same_files_and_leaves_the_branch_where_the_other_landed(repo, alice, settings,
                                                                                      backend, staging):
    settings.WORKGRAPH_GIT_BACKEND = backend
    first = _attempt(repo, alice, "first")
    second = _execution(first.run, "second")
    with attempt_workspace(first) as one, attempt_workspace(second) as two:
        (one.path / "README.md").write_text("one\nTWO\nthree\n")
        (two.path / "README.md").write_text("one\n2\nthree\n")
        landed = workspace_land(one, first)
        with pytest.raises(MergeConflictError) as conflict:
            workspace_land(two, second)
    assert conflict.value.files == ["README.md"]
    assert git(repo, "rev-parse", first.run.workspace.branch).strip() == landed.merge_commit == landed.result_commit
    assert set(staging) == {backend == "auto"}


def _attributes(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.bin filter=lfs\n*.txt text eol=crlf\n")
    git(repo, "add", ".gitattributes")
    git(repo, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-m", "attributes")


def _autocrlf(repo: Path) -> None:
    git(repo, "config", "core.autocrlf", "true")


def _nested(worktree: Path) -> None:
    repository_create(worktree / "vendor")


@pytest.mark.parametrize(("prepare", "change"), [
    (_attributes, lambda worktree: (worktree / "notes.txt").write_text("a\nb\n")),
    (_attributes, lambda worktree: (worktree / "blob.bin").write_text("large\n")),
    (_autocrlf, lambda worktree: (worktree / "notes.txt").write_text("a\r\nb\r\n")),
    (lambda repo: None, _nested),
], ids=["eol attribute", "filter attribute", "core.autocrlf", "nested repository"])
def test_where_libgit2_would_stage_otherwise_the_cli_stages_and_the_result_is_the_clis(tmp_path, settings, alice,
                                                                                      staging, prepare, change):
    cli = _landed(tmp_path, "cli", settings, alice, change, prepare)
    staging.clear()

    native = _landed(tmp_path, "auto", settings, alice, change, prepare)

    assert staging and not any(staging)
    assert {key: value for key, value in native.items() if key != "commit"} == \
        {key: value for key, value in cli.items() if key != "commit"}


def _planted(repo: Path, marker: Path) -> None:
    """Every program a repository can name for git to run, each writing ``marker``."""
    script = repo.parent / "payload.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    for hook in ("pre-commit", "commit-msg", "post-commit", "reference-transaction", "post-index-change",
                 "post-checkout", "pre-auto-gc"):
        (repo / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\nexec {script} {hook}\n")
        (repo / ".git" / "hooks" / hook).chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "core.hooksPath", str(repo / ".git" / "hooks"))


@pytest.mark.parametrize("backend", ["auto", "cli"])
def test_on_either_path_no_hook_or_file_system_monitor_of_the_repository_runs(tmp_path, settings, alice, staging,
                                                                              backend):
    marker = tmp_path / "payload-ran"

    landed = _landed(tmp_path, backend, settings, alice, _edits, lambda repo: _planted(repo, marker))

    assert staging == [backend == "auto"] * 2
    assert landed["tree"] and landed["branch is the commit"]
    assert not marker.exists(), marker.read_text()
