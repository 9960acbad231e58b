"""A repository's pooled worktrees are reused and never wrong: whatever the attempt before did to one —
files untracked or ignored, a mode changed, symlinks, a tracked file deleted, a ``.git`` of its own,
its ``.git`` rewritten — the next attempt finds exactly its head; a cancelled or killed attempt's
worktree is cleaned or deleted; and the pool never holds more than its size, nor lends one worktree
twice, when attempts come at once."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from graphs.workspaces import pool
from graphs.workspaces.libgit import staged, staged_commit
from graphs.workspaces.pool import pool_folder, worktree_committed, worktree_git, worktree_held
from tests.repos import git, repository_create

TIMEOUT = 60
ROOT_DIR = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo(tmp_path) -> Path:
    return pool_repository(tmp_path)


def pool_repository(tmp_path: Path) -> Path:
    """A repository whose ``main`` ignores ``*.log`` and has a script and a folder of two files, and a
    ``next`` branch one commit on."""
    folder = repository_create(tmp_path / "repo")
    (folder / ".gitignore").write_text("*.log\nbuild/\n")
    (folder / "run.sh").write_text("echo run\n")
    (folder / "lib").mkdir()
    (folder / "lib" / "a.py").write_text("A = 1\n")
    (folder / "lib" / "b.py").write_text("B = 2\n")
    git(folder, "add", "--all")
    _commit(folder, "more")
    git(folder, "branch", "next")
    git(folder, "checkout", "--quiet", "next")
    (folder / "lib" / "c.py").write_text("C = 3\n")
    git(folder, "add", "--all")
    _commit(folder, "next")
    git(folder, "checkout", "--quiet", "main")
    return folder


def _commit(folder: Path, message: str) -> None:
    git(folder, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-m", message)


def held(repo: Path, tmp_path: Path, revision: str, *, size: int = 1, spare: str = "spare"):
    return worktree_held(repo, git(repo, "rev-parse", revision).strip(), root=tmp_path / "workspaces", size=size,
                         spare=tmp_path / "workspaces" / spare)


def tree_of(path: Path) -> set[tuple[str, str, str]]:
    """Every entry of the worktree below its ``.git`` file as ``git ls-tree -r`` names one: mode, object
    id and path; a folder no file needs, or anything but a file or symlink, is an entry of its own."""
    entries, needed = set(), set()
    for folder, folders, files in os.walk(path):
        for name in [*folders, *files]:
            full = Path(folder) / name
            relative = str(full.relative_to(path))
            if relative == ".git":
                continue
            if full.is_symlink():
                entries.add(("120000", _blob(os.readlink(full).encode()), relative))
            elif full.is_file():
                mode = "100755" if os.stat(full).st_mode & 0o100 else "100644"
                entries.add((mode, _blob(full.read_bytes()), relative))
                if oct(os.stat(full).st_mode & 0o777) not in ("0o644", "0o755"):
                    entries.add(("mode", oct(os.stat(full).st_mode & 0o777), relative))
            else:
                entries.add(("folder", oct(os.stat(full).st_mode & 0o777), relative))
            needed.update(str(parent) for parent in Path(relative).parents)
    return {entry for entry in entries if not (entry[0] == "folder" and entry[1] == "0o755" and entry[2] in needed)}


def head_tree(repo: Path, revision: str) -> set[tuple[str, str, str]]:
    lines = git(repo, "ls-tree", "-r", revision).splitlines()
    return {(mode, object_id, path) for mode, _, object_id, path in (line.replace("\t", " ").split(" ", 3)
                                                                        for line in lines)}


def _blob(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()  # git's object id


def mess_up(path: Path) -> None:
    """What a careless or hostile agent leaves behind, short of its ``.git``."""
    (path / "notes.txt").write_text("untracked\n")
    (path / "debug.log").write_text("ignored\n")
    (path / "build" / "out").mkdir(parents=True)
    (path / "build" / "out" / "x.o").write_bytes(b"\0")
    (path / "README.md").write_text("changed\n")
    os.chmod(path / "run.sh", 0o755)
    os.chmod(path / "lib" / "b.py", 0o600)
    (path / "lib" / "a.py").unlink()
    (path / "lib" / "a.py").symlink_to("/etc/passwd")
    (path / "src" / "app.py").unlink()
    (path / "outside").symlink_to("/etc")
    (path / "lib" / ".git").write_text("gitdir: /nowhere\n")
    (path / "vendor").mkdir()
    git(path / "vendor", "init", "--quiet")
    (path / "lib" / "empty").mkdir()


def test_nothing_an_attempt_left_is_in_the_next_attempts_worktree(repo, tmp_path):
    with held(repo, tmp_path, "main") as first:
        assert tree_of(first.path) == head_tree(repo, "main")
        mess_up(first.path)

    with held(repo, tmp_path, "next") as second:
        assert second.path == first.path  # reused, not made again
        assert tree_of(second.path) == head_tree(repo, "next")
        assert git(second.path, "rev-parse", "HEAD").strip() == git(repo, "rev-parse", "next").strip()
        mess_up(second.path)

    with held(repo, tmp_path, "main") as third:
        assert tree_of(third.path) == head_tree(repo, "main")


def _decoy(tmp_path: Path) -> Path:
    decoy = tmp_path / "decoy"
    git(tmp_path, "init", "--quiet", str(decoy))
    return decoy


def rewrites_dot_git_file(path: Path, decoy: Path) -> None:
    (path / ".git").write_text(f"gitdir: {decoy / '.git'}\n")


def replaces_dot_git_with_a_repository(path: Path, decoy: Path) -> None:
    (path / ".git").unlink()
    git(path, "init", "--quiet")
    (path / ".git" / "config").write_text(f"[core]\n\tfsmonitor = touch {decoy.parent / 'owned'}\n")


def half_writes_dot_git(path: Path, decoy: Path) -> None:
    (path / ".git").write_text((path / ".git").read_text()[:12])


def links_dot_git_to_a_decoy(path: Path, decoy: Path) -> None:
    (path / ".git").unlink()
    (path / ".git").symlink_to(decoy / ".git")


@pytest.mark.parametrize("tamper", [rewrites_dot_git_file, replaces_dot_git_with_a_repository, half_writes_dot_git,
                                    links_dot_git_to_a_decoy])
def test_a_worktree_whose_dot_git_was_tampered_with_is_made_again(repo, tmp_path, tamper):
    decoy = _decoy(tmp_path)
    with held(repo, tmp_path, "main") as first:
        made_by_git = first.dot_git
        mess_up(first.path)
        tamper(first.path, decoy)

    with held(repo, tmp_path, "next") as second:
        assert tree_of(second.path) == head_tree(repo, "next")
        assert (second.path / ".git").is_file() and (second.path / ".git").read_text() == second.dot_git
        assert Path(second.dot_git.removeprefix("gitdir:").strip()).parent == repo / ".git" / "worktrees"
        assert made_by_git.startswith("gitdir: ")
    # The console's git never followed the agent's .git: the decoy repository is as empty as it was made.
    assert not (decoy / ".git" / "index").exists() and not list((decoy / ".git" / "refs" / "heads").iterdir())
    assert not (tmp_path / "owned").exists()
    assert git(repo, "worktree", "list").count("\n") == 2  # the repository's own and the pool's one


def landed(worktree, *, by_libgit2: bool = False) -> str:
    """Commit all the worktree holds as a landing does: through libgit2 where it stages as git does (with
    ``by_libgit2``, only there), else by git; record the commit as the worktree's clean head and return it."""
    change = staged(worktree)
    assert change is not None or not by_libgit2
    commit = (staged_commit(change, "attempt") or change.head) if change is not None else _commit_everything(worktree)
    worktree_committed(worktree, commit)
    return commit


def _commit_everything(worktree) -> str:
    """Commit all the worktree holds, as a landing attempt does; the commit."""
    worktree_git(worktree, "add", "--all")
    tree = worktree_git(worktree, "write-tree").strip()
    commit = worktree_git(worktree, "commit-tree", tree, "-p", "HEAD", "-m", "attempt").strip()
    worktree_git(worktree, "update-ref", "--no-deref", "HEAD", commit)
    return commit


def _commands_recorded(monkeypatch) -> list[str]:
    """The git subcommands the pool runs in worktrees from now on."""
    ran: list[str] = []
    for name in ("worktree_git", "worktree_git_run"):
        real = getattr(pool, name)

        def recorded(worktree, *args, real=real):
            ran.append(args[0])
            return real(worktree, *args)

        monkeypatch.setattr(pool, name, recorded)
    return ran


def ignored_and_edited(path: Path) -> None:
    """What a landing's commit takes in, bar what git ignores."""
    (path / "debug.log").write_text("ignored\n")
    (path / "build" / "out").mkdir(parents=True)
    (path / "build" / "out" / "x.o").write_bytes(b"\0")
    (path / "lib" / "trace.log").write_text("ignored, beside tracked files\n")
    (path / "lib" / "empty" / "deeper").mkdir(parents=True)
    (path / "notes.txt").write_text("untracked, then committed\n")
    (path / "README.md").write_text("changed\n")
    (path / "lib" / "a.py").unlink()


def edited_only(path: Path) -> None:
    """What a landing's commit takes in whole: a file changed, one deleted, one added in a new folder."""
    (path / "README.md").write_text("changed\n")
    (path / "lib" / "a.py").unlink()
    (path / "docs" / "notes").mkdir(parents=True)
    (path / "docs" / "notes" / "new.txt").write_text("untracked, then committed\n")


def empties_a_tracked_folder(path: Path) -> None:
    """Every file of a folder deleted: the commit drops them, the folder stays on disk."""
    (path / "lib" / "a.py").unlink()
    (path / "lib" / "b.py").unlink()


def edited_with_empty_folders(path: Path) -> None:
    """What a landing's commit takes in, and folders it cannot: empty ones, one inside another."""
    (path / "lib" / "empty" / "deeper").mkdir(parents=True)
    (path / "tmp").mkdir()
    (path / "notes.txt").write_text("untracked, then committed\n")
    (path / "lib" / "a.py").unlink()


def a_mode_and_a_nested_git_besides(path: Path) -> None:
    ignored_and_edited(path)
    os.chmod(path / "lib" / "b.py", 0o600)
    (path / "lib" / ".git").write_text("gitdir: /nowhere\n")


@pytest.mark.parametrize("left", [edited_only, ignored_and_edited, edited_with_empty_folders, empties_a_tracked_folder,
                                  a_mode_and_a_nested_git_besides])
def test_a_worktree_given_back_after_its_commit_is_that_commit_and_is_taken_there_as_it_is(
        repo, tmp_path, monkeypatch, left):
    ran = _commands_recorded(monkeypatch)
    with held(repo, tmp_path, "main") as first:
        left(first.path)
        commit = _commit_everything(first)
        worktree_committed(first, commit)
        ran.clear()
    # Checked out again only where the sweep deleted something a checkout must put back, and cleaned
    # by git only where something, a folder or a file, is not in the index.
    assert ("checkout" in ran) == (left is a_mode_and_a_nested_git_besides)
    assert ("clean" in ran) == (left is not edited_only)
    assert (pool_folder(tmp_path / "workspaces", repo) / "0.clean").read_text() == commit
    assert tree_of(first.path) == head_tree(repo, commit)

    ran.clear()
    with held(repo, tmp_path, commit) as second:
        assert ran == []  # at the commit it was left clean at: ready as it is
        assert second.path == first.path
        assert tree_of(second.path) == head_tree(repo, commit)
        assert git(second.path, "rev-parse", "HEAD").strip() == commit


def test_a_committed_worktree_is_swept_from_its_commit_on_and_its_give_back_walks_it_no_more(
        repo, tmp_path, monkeypatch):
    walked = []
    real = pool.tree_swept

    def recorded(path: Path):
        walked.append(path)
        return real(path)

    monkeypatch.setattr(pool, "tree_swept", recorded)
    with held(repo, tmp_path, "main") as worktree:
        ignored_and_edited(worktree.path)
        commit = _commit_everything(worktree)
        worktree_committed(worktree, commit)
        worktree.state.sweeping.result()  # under way while the block still holds the worktree
        assert walked == [worktree.path]
    assert walked == [worktree.path]
    assert tree_of(worktree.path) == head_tree(repo, commit)


def test_a_worktree_of_its_own_beyond_the_pool_is_not_swept_when_committed(repo, tmp_path):
    with held(repo, tmp_path, "main", size=0) as worktree:
        commit = _commit_everything(worktree)
        worktree_committed(worktree, commit)
        assert worktree.state.sweeping is None  # it is removed, not given back
    assert not worktree.path.exists()


class Cancelled(Exception):
    """What an attempt's cancel raises through its workspace's block."""


def test_a_cancelled_attempts_worktree_is_given_back_clean(repo, tmp_path):
    with pytest.raises(Cancelled), held(repo, tmp_path, "main") as worktree:
        mess_up(worktree.path)
        raise Cancelled

    folder = pool_folder(tmp_path / "workspaces", repo)
    assert (folder / "0.clean").exists()
    assert tree_of(worktree.path) == head_tree(repo, "main")


KILLED_ATTEMPT = """
import os, signal, sys
from pathlib import Path
from graphs.workspaces.pool import worktree_held
repo, revision, root = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
with worktree_held(repo, revision, root=root, size=1, spare=root / "spare") as worktree:
    (worktree.path / "notes.txt").write_text("left by a killed attempt\\n")
    (worktree.path / "README.md").write_text("changed\\n")
    (worktree.path / "lib" / ".git").mkdir()
    print(worktree.path, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_attempts_worktree_is_cleaned_before_the_next_attempt_has_it(repo, tmp_path):
    root = tmp_path / "workspaces"
    main = git(repo, "rev-parse", "main").strip()
    done = subprocess.run([sys.executable, "-c", KILLED_ATTEMPT, str(repo), main, str(root)], cwd=ROOT_DIR,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = Path(done.stdout.strip())
    assert (left / "notes.txt").exists()  # the killed attempt never gave it back
    assert not (pool_folder(root, repo) / "0.clean").exists()

    with held(repo, tmp_path, "next") as worktree:
        assert worktree.path == left  # its lock died with it
        assert tree_of(worktree.path) == head_tree(repo, "next")


def test_eight_attempts_at_once_share_no_worktree_and_the_pool_keeps_its_size(repo, tmp_path):
    size, attempts = 3, 8
    revisions = {name: git(repo, "rev-parse", name).strip() for name in ("main", "next")}
    in_use: set[Path] = set()
    used: list[Path] = []
    problems: list[str] = []
    guard = threading.Lock()
    all_held = threading.Barrier(attempts, timeout=TIMEOUT)

    def attempt(number: int, wave: int) -> None:
        name = ("main", "next")[(number + wave) % 2]
        try:
            with held(repo, tmp_path, name, size=size, spare=f"spare-{wave}-{number}") as worktree:
                with guard:
                    if worktree.path in in_use:
                        problems.append(f"{worktree.path} lent twice")
                    in_use.add(worktree.path)
                    used.append(worktree.path)
                if tree_of(worktree.path) != head_tree(repo, revisions[name]):
                    problems.append(f"{worktree.path} is not at {name}")
                mess_up(worktree.path)
                all_held.wait()
                with guard:
                    in_use.discard(worktree.path)
        except Exception as error:  # reported to the test, which asserts there was none
            problems.append(repr(error))

    for wave in range(2):
        threads = [threading.Thread(target=attempt, args=(number, wave)) for number in range(attempts)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=TIMEOUT)
        assert not any(thread.is_alive() for thread in threads)
        assert problems == []

    folder = pool_folder(tmp_path / "workspaces", repo)
    pooled = {path for path in used if path.parent == folder}
    assert pooled == {folder / str(slot) for slot in range(size)}
    assert sorted(entry.name for entry in folder.iterdir() if entry.is_dir()) == ["0", "1", "2"]
    assert not any(path.exists() for path in used if path not in pooled)  # the spares were removed
    assert git(repo, "worktree", "list").count("\n") == 1 + size
    for path in pooled:  # each given back clean at its own head
        assert tree_of(path) == head_tree(repo, git(path, "rev-parse", "HEAD").strip())
