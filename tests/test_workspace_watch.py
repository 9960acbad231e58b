"""A pooled worktree's watch names every path touched since it was left clean — in folders made or renamed
in an earlier hold, through a second name of a file since removed — and says it does not know (None)
whenever it might have missed one: a file with a second name still there, the kernel's queue overflowed,
a watch it could not add, no inotify at all; the attempt is then staged and given back by walking the
worktree, and lands the same. A worktree no watch could be had for is not listed again to try."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import inotify_simple
import pytest

from graphs.workspaces import watches
from graphs.workspaces.watches import touched
from tests.repos import git
from tests.test_workspace_pool import head_tree, held, landed, pool_repository, tree_of

pytestmark = pytest.mark.usefixtures("through_libgit2")


@pytest.fixture
def repo(tmp_path) -> Path:
    return pool_repository(tmp_path)


def test_what_an_earlier_hold_made_is_watched_in_the_next(repo, tmp_path):
    with held(repo, tmp_path, "main") as first:
        (first.path / "new" / "deeper").mkdir(parents=True)
        (first.path / "new" / "deeper" / "f.txt").write_text("one\n")
        os.rename(first.path / "lib", first.path / "library")
        commit = landed(first, by_libgit2=True)

    with held(repo, tmp_path, commit) as second:
        assert touched(second) == set()
        (second.path / "new" / "deeper" / "f.txt").write_text("two\n")
        (second.path / "library" / "b.py").write_text("B = 3\n")

        assert touched(second) == {"new/deeper/f.txt", "library/b.py"}
        second_commit = landed(second, by_libgit2=True)
    assert tree_of(second.path) == head_tree(repo, second_commit)
    assert git(repo, "show", f"{second_commit}:new/deeper/f.txt") == "two\n"


def test_a_write_through_a_second_name_since_removed_touches_the_file(repo, tmp_path):
    with held(repo, tmp_path, "main") as worktree:
        os.link(worktree.path / "lib" / "b.py", tmp_path / "outside-name")
        with open(tmp_path / "outside-name", "a") as other:
            other.write("B += 1\n")
        (tmp_path / "outside-name").unlink()

        assert touched(worktree) == {"lib/b.py"}


def test_a_file_with_a_second_name_still_there_is_not_trusted(repo, tmp_path):
    with held(repo, tmp_path, "main") as worktree:
        os.link(worktree.path / "lib" / "b.py", worktree.path / "lib" / "b2.py")

        assert touched(worktree) is None
        commit = landed(worktree, by_libgit2=True)
    assert git(repo, "show", f"{commit}:lib/b2.py") == "B = 2\n"
    assert tree_of(worktree.path) == head_tree(repo, commit)


def test_an_overflowed_queue_is_not_trusted_and_the_worktree_is_walked(repo, tmp_path):
    with held(repo, tmp_path, "main") as worktree:
        (worktree.path / "many").mkdir()
        worktree.state.watch.drain()  # "many" is watched: each file below is two events
        limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        for number in range(limit // 2 + 1):
            (worktree.path / "many" / f"{number}.txt").write_bytes(b"")

        assert touched(worktree) is None
        commit = landed(worktree, by_libgit2=True)
    assert len(git(repo, "ls-tree", "--name-only", f"{commit}:many").split()) == limit // 2 + 1
    assert tree_of(worktree.path) == head_tree(repo, commit)


def test_a_watch_that_could_not_be_added_is_not_trusted(repo, tmp_path, monkeypatch):
    with held(repo, tmp_path, "main") as worktree:

        def refused(self, path, mask):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(inotify_simple.INotify, "add_watch", refused)
        (worktree.path / "unwatched").mkdir()
        (worktree.path / "unwatched" / "f.txt").write_text("f\n")

        assert touched(worktree) is None
        commit = landed(worktree, by_libgit2=True)
    assert git(repo, "show", f"{commit}:unwatched/f.txt") == "f\n"


def test_without_inotify_every_worktree_is_walked(repo, tmp_path, monkeypatch):
    monkeypatch.setattr(watches, "INotify", None)
    with held(repo, tmp_path, "main") as worktree:
        (worktree.path / "README.md").write_text("changed\n")

        assert worktree.state.watch is None and touched(worktree) is None
        commit = landed(worktree, by_libgit2=True)
    assert tree_of(worktree.path) == head_tree(repo, commit)


def test_a_worktree_no_watch_could_be_had_for_is_walked_without_listing_it_again(repo, tmp_path, monkeypatch):
    tried: list[bytes] = []

    def refused(self, path, mask):
        tried.append(path)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(inotify_simple.INotify, "add_watch", refused)
    with held(repo, tmp_path, "main") as first:
        assert first.state.watch is None
    assert len(tried) == 1
    with held(repo, tmp_path, "main") as second:
        (second.path / "README.md").write_text("changed\n")
        assert touched(second) is None
        commit = landed(second, by_libgit2=True)
    assert len(tried) == 1
    assert tree_of(second.path) == head_tree(repo, commit)


def test_the_watch_of_a_worktree_deleted_since_frees_its_inotify_instance(repo, tmp_path):
    with held(repo, tmp_path, "main") as gone:
        gone_watch = gone.state.watch
    shutil.rmtree(tmp_path / "workspaces")
    (tmp_path / "other").mkdir()
    other = pool_repository(tmp_path / "other")

    with held(other, tmp_path / "other", "main") as worktree:
        assert worktree.state.watch is not None

    assert str(gone.path) not in watches._WATCHES
    with pytest.raises(ValueError):  # closed: its file descriptor is given back
        gone_watch.notify.fileno()
