"""In the sandbox, a worktree the console holds shows its git read-only: real ``git status``, ``diff``,
``log``, ``show`` and ``blame`` see the attempt's change and the history, from a view of the repository's
git directory holding no secret of its configuration, none of its hooks and not the console's lock file;
a folder the console does not hold as a worktree, or a ``.git`` the agent rewrote, shows none of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs.workspaces.command_process import CommandResult, command_run
from graphs.workspaces.git import REPOSITORY_LOCK_NAME, repository_locked
from graphs.workspaces.git_view import git_view_mounts
from graphs.workspaces.pool import worktree_held
from graphs.workspaces.sandbox import process_env
from tests.repos import git, repository_create

pytestmark = pytest.mark.sandbox

TOKEN = "ghp_the-teams-token-5f2a"


@pytest.fixture(autouse=True)
def sandboxed(settings):
    settings.WORKGRAPH_SANDBOX = "bwrap"
    settings.WORKGRAPH_SANDBOX_WRITABLE = []


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository with two commits on ``main`` (the second adds a line to the README), whose config holds
    a remote with a token in its URL, a header with another, and a credential helper."""
    folder = repository_create(tmp_path / "repo")
    (folder / "README.md").write_text("one\ntwo\nthree\nfour\n")
    git(folder, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-am", "four")
    git(folder, "remote", "add", "origin", f"https://lead:{TOKEN}@example.com/team/repo.git")
    git(folder, "config", "http.https://example.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    git(folder, "config", "credential.helper", "store")
    git(folder, "config", "core.autocrlf", "input")
    return folder


def _held(repo: Path, tmp_path: Path):
    return worktree_held(repo, git(repo, "rev-parse", "main").strip(), root=tmp_path / "workspaces", size=1,
                         spare=tmp_path / "workspaces" / "spare")


def _sandboxed(worktree: Path, *argv: str) -> CommandResult:
    return command_run(argv, cwd=worktree, timeout=60, env=process_env(), output_max_bytes=100_000,
                       on_output=lambda _stream, _line: None)


def _changed(worktree: Path) -> None:
    """The attempt's change: a line added to the README, a new file."""
    (worktree / "README.md").write_text("one\ntwo\nthree\nfour\nfive\n")
    (worktree / "notes.txt").write_text("a new file\n")


def test_git_status_diff_log_show_and_blame_read_the_attempts_change_and_the_history(repo, tmp_path):
    with _held(repo, tmp_path) as worktree:
        _changed(worktree.path)

        status = _sandboxed(worktree.path, "git", "status", "--porcelain")
        diff = _sandboxed(worktree.path, "git", "diff")
        log = _sandboxed(worktree.path, "git", "log", "--format=%s")
        show = _sandboxed(worktree.path, "git", "show", "--format=%s", "HEAD")
        blame = _sandboxed(worktree.path, "git", "blame", "--porcelain", "README.md")

    assert [result.exit_code for result in (status, diff, log, show, blame)] == [0] * 5, (status, diff, log, show,
                                                                                         blame)
    assert status.output.splitlines() == [" M README.md", "?? notes.txt"]
    assert "+five" in diff.output and "notes.txt" not in diff.output
    assert log.output.splitlines() == ["four", "start"]
    assert show.output.startswith("four\n") and "+four" in show.output
    authors = [line for line in blame.output.splitlines() if line.startswith("author ")]
    assert authors == ["author Lead", "author Lead", "author Not Committed Yet"]


def test_the_agents_git_reads_the_history_through_alternates(tmp_path):
    origin = repository_create(tmp_path / "origin")
    shared = tmp_path / "shared"
    git(tmp_path, "clone", "--quiet", "--shared", str(origin), str(shared))
    assert (shared / ".git" / "objects" / "info" / "alternates").read_text().strip() == str(origin / ".git" / "objects")

    with _held(shared, tmp_path) as worktree:
        log = _sandboxed(worktree.path, "git", "log", "--format=%s")

    assert (log.exit_code, log.output) == (0, "start\n")


def test_the_view_holds_only_what_git_reads_and_none_of_the_configs_secrets(repo, tmp_path):
    common = repo / ".git"
    with _held(repo, tmp_path) as worktree:
        listed = _sandboxed(worktree.path, "ls", "-A", str(common))
        others = _sandboxed(worktree.path, "ls", "-A", str(common / "worktrees"))
        config = _sandboxed(worktree.path, "git", "config", "--list", "--show-scope")
        remotes = _sandboxed(worktree.path, "git", "remote", "-v")

    assert listed.output.split() == ["HEAD", "config", "info", "objects", "refs", "worktrees"]
    assert others.output.split() == [worktree.git_dir.name]
    assert TOKEN not in config.output + remotes.output
    local = [line for line in config.output.splitlines() if line.startswith("local\t")]
    assert local == ["local\tcore.repositoryformatversion=0", "local\tcore.autocrlf=input"]
    assert remotes.output == ""


def test_the_repository_lock_is_not_there_to_hold(repo, tmp_path):
    with repository_locked(repo):
        assert (repo / ".git" / REPOSITORY_LOCK_NAME).exists()
    lock = repo / ".git" / REPOSITORY_LOCK_NAME
    with _held(repo, tmp_path) as worktree:
        opened = _sandboxed(worktree.path, "cat", str(lock))

    assert opened.exit_code != 0 and "No such file or directory" in opened.output


def test_a_git_file_the_agent_rewrote_is_never_followed(repo, tmp_path):
    other = repository_create(tmp_path / "other")
    with _held(repo, tmp_path) as worktree:
        (worktree.path / ".git").write_text(f"gitdir: {other / '.git'}\n")
        status = _sandboxed(worktree.path, "git", "status")
        listed = _sandboxed(worktree.path, "ls", str(other))
        (worktree.path / ".git").write_text(worktree.dot_git)

    assert status.exit_code != 0 and "not a git repository" in status.output
    assert "No such file or directory" in listed.output


def test_a_folder_the_console_does_not_hold_as_a_worktree_shows_no_git(repo, tmp_path):
    with _held(repo, tmp_path) as worktree:
        path = worktree.path
    with git_view_mounts(path) as mounts:
        assert mounts == []
    git(repo, "worktree", "add", "--quiet", "--detach", str(tmp_path / "own"), "main")

    status = _sandboxed(tmp_path / "own", "git", "status")

    assert status.exit_code != 0 and "not a git repository" in status.output
