"""Staging only the paths a pooled worktree's watch saw touched gives exactly the index libgit2's ``add_all``
gives walking the whole worktree, whatever the change: a file added, changed, deleted, renamed, made
executable, replaced by a symlink or a folder (and back), a folder renamed, moved in or emptied, ignored
files, empty folders, a write through a hard link since removed, a write through a shared mapping. Where
only ``add_all`` may say what it stages — a nested repository, a fifo, a file with a second name — the
watched staging declines and changes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from graphs.workspaces import libgit  # noqa: F401  (keeps libgit2 from the machine's configuration)
from graphs.workspaces.touched import touched_staged
from graphs.workspaces.watches import touched
from tests.repos import git, repository_create
from tests.test_workspace_pool import _commit, held


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository that ignores ``*.log`` and ``build/``, yet tracks one ignored file."""
    folder = repository_create(tmp_path / "repo")
    (folder / ".gitignore").write_text("*.log\nbuild/\n")
    (folder / "run.sh").write_text("echo run\n")
    (folder / "lib" / "deep").mkdir(parents=True)
    (folder / "lib" / "a.py").write_text("A = 1\n")
    (folder / "lib" / "b.py").write_text("B = 2\n")
    (folder / "lib" / "deep" / "c.py").write_text("C = 3\n")
    (folder / "kept.log").write_text("tracked though ignored\n")
    git(folder, "add", "--all")
    git(folder, "add", "--force", "kept.log")
    _commit(folder, "more")
    return folder


def _mapped_write(path: Path) -> None:
    """Change a file's first byte through a shared mapping, in a process that then ends."""
    script = ("import mmap, sys\nf = open(sys.argv[1], 'r+b')\nm = mmap.mmap(f.fileno(), 0)\nm[0:1] = b'X'\n"
              "m.flush()\n")
    subprocess.run([sys.executable, "-c", script, str(path)], check=True)


def _moved_in(path: Path) -> None:
    outside = path.parent / "made-outside"
    (outside / "inner").mkdir(parents=True)
    (outside / "inner" / "x.txt").write_text("moved in\n")
    os.rename(outside, path / "arrived")


def _atomic_save(path: Path) -> None:
    (path / "README.md.new").write_text("saved whole\n")
    os.replace(path / "README.md.new", path / "README.md")


def _hard_link_written_then_removed(path: Path) -> None:
    os.link(path / "lib" / "b.py", path / "other-name")
    with open(path / "other-name", "a") as other:
        other.write("B += 1\n")
    (path / "other-name").unlink()


def _folder_replaced_by_file(path: Path) -> None:
    shutil.rmtree(path / "lib")
    (path / "lib").write_text("now a file\n")


def _file_replaced_by_folder(path: Path) -> None:
    (path / "lib" / "a.py").unlink()
    (path / "lib" / "a.py").mkdir()
    (path / "lib" / "a.py" / "inner.py").write_text("inside\n")


def _renamed_folder_then_written(path: Path) -> None:
    os.rename(path / "lib", path / "library")
    (path / "library" / "deep" / "d.py").write_text("D = 4\n")
    (path / "library" / "a.py").write_text("A = 2\n")


def _new_ignore_rule(path: Path) -> None:
    (path / "scratch.tmp").write_text("ignored by the rule written next\n")
    (path / "keep.txt").write_text("not ignored\n")
    (path / ".gitignore").write_text("*.log\nbuild/\n*.tmp\n")


SHAPES = {
    "a file added": lambda path: (path / "new.txt").write_text("new\n"),
    "a file changed": lambda path: (path / "README.md").write_text("changed\n"),
    "a file deleted": lambda path: (path / "lib" / "a.py").unlink(),
    "a file renamed": lambda path: os.rename(path / "lib" / "a.py", path / "lib" / "z.py"),
    "made executable": lambda path: os.chmod(path / "run.sh", 0o755),
    "a symlink added": lambda path: (path / "link").symlink_to("README.md"),
    "a file replaced by a symlink": lambda path: ((path / "lib" / "a.py").unlink(),
                                                  (path / "lib" / "a.py").symlink_to("b.py")),
    "ignored files": lambda path: ((path / "debug.log").write_text("x\n"), (path / "build" / "o").mkdir(parents=True),
                                   (path / "build" / "o" / "x.o").write_bytes(b"\0")),
    "a tracked ignored file changed": lambda path: (path / "kept.log").write_text("changed\n"),
    "empty folders": lambda path: (path / "lib" / "empty" / "deeper").mkdir(parents=True),
    "files in new nested folders": lambda path: ((path / "a" / "b" / "c").mkdir(parents=True),
                                                 (path / "a" / "b" / "c" / "d.txt").write_text("d\n"),
                                                 (path / "a" / "top.txt").write_text("t\n")),
    "a file replaced by a folder": _file_replaced_by_folder,
    "a folder replaced by a file": _folder_replaced_by_file,
    "a folder emptied": lambda path: shutil.rmtree(path / "lib" / "deep"),
    "a folder renamed, then written in": _renamed_folder_then_written,
    "a folder moved in": _moved_in,
    "touched, content unchanged": lambda path: os.utime(path / "README.md", (1, 1)),
    "saved whole over the old": _atomic_save,
    "a new ignore rule": _new_ignore_rule,
    "written through a hard link since removed": _hard_link_written_then_removed,
    "written through a shared mapping": lambda path: _mapped_write(path / "README.md"),
}


def _entries(index: pygit2.Index) -> list[tuple[str, int, str]]:
    return sorted((entry.path, entry.mode, str(entry.id)) for entry in index)


def _opened(worktree) -> pygit2.Repository:
    repository = pygit2.Repository(str(worktree.git_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    repository.workdir = str(worktree.path)
    return repository


@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
def test_staging_the_touched_paths_gives_the_index_add_all_gives(repo, tmp_path, shape):
    with held(repo, tmp_path, "main") as worktree:
        SHAPES[shape](worktree.path)
        paths = touched(worktree)
        assert paths is not None
        watched, walked = _opened(worktree), _opened(worktree)
        unchanged = _entries(walked.index)

        assert touched_staged(watched, watched.index, worktree.path, paths)
        walked.index.add_all()

        assert _entries(watched.index) == _entries(walked.index)
        if shape not in ("ignored files", "empty folders", "touched, content unchanged"):
            assert _entries(walked.index) != unchanged  # the shape changed what is staged


DECLINED = {
    "a nested repository": lambda path: git(path / "lib", "init", "--quiet"),
    "a fifo": lambda path: os.mkfifo(path / "pipe"),
    "a file with a second name": lambda path: os.link(path / "lib" / "b.py", path / "lib" / "b-again.py"),
    "a new folder holding a second name": lambda path: ((path / "more").mkdir(),
                                                        os.link(path / "run.sh", path / "more" / "run-again.sh")),
}


@pytest.mark.parametrize("shape", list(DECLINED), ids=list(DECLINED))
def test_what_only_add_all_may_stage_is_declined_and_nothing_is_staged(repo, tmp_path, shape):
    with held(repo, tmp_path, "main") as worktree:
        DECLINED[shape](worktree.path)
        worktree.state.watch.drain()
        paths = set(worktree.state.watch.touched)
        repository = _opened(worktree)
        before = _entries(repository.index)

        assert not touched_staged(repository, repository.index, worktree.path, paths)
        assert _entries(repository.index) == before
