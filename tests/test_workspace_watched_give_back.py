"""A pooled worktree committed through libgit2 is given back looking only at the paths its watch saw
touched: what its index does not hold there is deleted, no sweep walks the tree and no git process runs,
and the next attempt at that commit finds it exactly so. Where the touched paths hold what git could not
see or set (a mode no checkout gives, a ``.git`` below the top) it is reset whole as without a watch; and a
worktree written in after it was left clean is reset whole when next taken, whatever its clean mark says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphs.workspaces import pool
from graphs.workspaces.pool import pool_folder
from tests.test_workspace_pool import (
    _commands_recorded,
    a_mode_and_a_nested_git_besides,
    edited_only,
    edited_with_empty_folders,
    empties_a_tracked_folder,
    head_tree,
    held,
    ignored_and_edited,
    landed,
    pool_repository,
    tree_of,
)

pytestmark = pytest.mark.usefixtures("through_libgit2")


@pytest.fixture
def repo(tmp_path) -> Path:
    return pool_repository(tmp_path)


@pytest.fixture
def sweeps(monkeypatch) -> list[Path]:
    """The worktrees the give-back's sweep walked."""
    walked: list[Path] = []
    real = pool.tree_swept

    def recorded(path: Path):
        walked.append(path)
        return real(path)

    monkeypatch.setattr(pool, "tree_swept", recorded)
    return walked


def _untracked_file_and_symlink(path: Path) -> None:
    (path / "notes.txt").write_text("committed\n")
    (path / "lib" / "scratch.log").write_text("ignored\n")
    (path / "latest").symlink_to("notes.txt")
    os.mkfifo(path / "lib" / "pipe")


@pytest.mark.parametrize("left", [edited_only, ignored_and_edited, edited_with_empty_folders, empties_a_tracked_folder,
                                  _untracked_file_and_symlink])
def test_a_committed_worktree_is_given_back_by_its_touched_paths_alone(repo, tmp_path, monkeypatch, sweeps, left):
    ran = _commands_recorded(monkeypatch)
    with held(repo, tmp_path, "main") as first:
        left(first.path)
        commit = landed(first)
        ran.clear()
    assert sweeps == [] and ran == []
    assert (pool_folder(tmp_path / "workspaces", repo) / "0.clean").read_text() == commit
    assert tree_of(first.path) == head_tree(repo, commit)

    with held(repo, tmp_path, commit) as second:
        assert ran == [] and sweeps == []
        assert tree_of(second.path) == head_tree(repo, commit)


def _odd_folder_mode(path: Path) -> None:
    (path / "lib" / "private").mkdir()
    (path / "lib" / "private" / "x.py").write_text("X = 1\n")
    os.chmod(path / "lib" / "private", 0o700)


@pytest.mark.parametrize("left", [a_mode_and_a_nested_git_besides, _odd_folder_mode])
def test_what_git_could_not_see_or_set_among_the_touched_paths_resets_it_whole(repo, tmp_path, sweeps, left):
    with held(repo, tmp_path, "main") as worktree:
        left(worktree.path)
        commit = landed(worktree)
    assert sweeps == [worktree.path]
    assert tree_of(worktree.path) == head_tree(repo, commit)


def test_a_worktree_written_in_after_it_was_left_clean_is_reset_when_taken(repo, tmp_path, sweeps):
    with held(repo, tmp_path, "main") as first:
        (first.path / "README.md").write_text("committed\n")
        commit = landed(first)
    (first.path / "README.md").write_text("written after the give-back\n")
    (first.path / "stray.txt").write_text("so was this\n")

    with held(repo, tmp_path, commit) as second:
        assert sweeps == [second.path]
        assert tree_of(second.path) == head_tree(repo, commit)
