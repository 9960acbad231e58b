"""Worktrees kept for reuse: a repository's attempts move a worktree of its pool to their head rather
than writing a whole tree and deleting it.

Each repository has up to ``size`` slots under ``<root>/pool/<key>/``: slot ``n`` is the worktree
``n/``, the lock file ``n.lock`` and the record ``n.gitdir`` (the text of the worktree's ``.git`` file as
git wrote it). An attempt holds a slot by ``flock`` on its lock file, for its whole time, so two attempts
— threads of one worker or processes of the machine — never share one, and a killed process's slot is
free again the moment it dies. When every slot is held, the attempt gets a worktree of its own at the
place it names, added and removed as before: the pool never grows past ``size``.

A slot is handed out exactly at its head, whatever the attempt before it did:

- its ``.git`` file and the git directory's ``gitdir`` and ``commondir`` must be as git made them, else
  the whole worktree is deleted and added again (nothing of a rewritten ``.git`` is ever followed: the
  console's git names the git directory it recorded);
- ``find`` lists what git cannot see or set — a ``.git`` below the top (git skips every such name, so
  ``clean`` leaves it), a folder or file its owner cannot use — and each is deleted;
- ``git checkout --force --detach`` rewrites only the files that differ from the head, with the stat
  checks pinned on the command line (a repository's ``core.fileMode=false`` or ``core.trustctime=false``
  would otherwise keep a mode or content the agent changed), and ``git clean -ffdx`` removes every
  untracked and ignored file, nested repositories included.

That happens when a slot is given back (a cancelled or failed attempt's too), and again when it is taken
unless the attempt before gave it back clean (``n.clean``, written after the cleaning and removed when
the slot is taken: a process killed while holding one leaves none). Any step that fails deletes the
worktree instead: a slot is clean or gone.

Two steps are left out where what they would do is known to be nothing. A worktree whose attempt
committed everything in it (``worktree_committed``: ``git add --all`` and the commit were the last to
touch it) holds nothing tracked that differs from its head, so when the sweep found nothing either it
needs no checkout: what is left is only what its index does not hold. When the sweep counted as many
regular files, symlinks and folders as the index holds, and nothing else, nothing is left; otherwise
``git clean`` deletes it. Since nothing runs in such a worktree after its commit, its sweep and the
listing of its index begin as the commit is written, on threads of their own, while the landing moves
the branch and records the change; the give-back waits for them. And ``n.clean`` names the commit the
worktree was left clean at: an attempt taking it at that very commit — a chain's next node, at the head
the one before landed — finds it ready, with no checkout.

Where this process watches the worktree (``graphs.workspaces.watches``) and its attempt was committed
through libgit2, the give-back looks at the touched paths alone (``graphs.workspaces.touched``): what the
index does not hold there is deleted, and nothing walks the tree; anything else there, and it is reset as
above. A worktree this process left clean at the very commit asked for, but saw touched since, is reset
whole when taken, whatever its clean mark says.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.workspaces.git import (
    WorkspaceError,
    git_checked,
    git_command,
    repository_git,
    repository_git_dir,
    repository_git_run,
    repository_locked,
)
from graphs.workspaces.git_view import git_view_held
from graphs.workspaces.sweeps import INDEX_LISTING, Swept, index_counts, tree_swept
from graphs.workspaces.touched import touched_leftovers
from graphs.workspaces.watches import touched, watch_clean, watch_dirty, watch_dropped

logger = logging.getLogger(__name__)

# What a worktree's git commands run with besides SAFE_CONFIG: every change to a file's content, type or
# executable bit is seen whatever the repository's configuration says, and the index is the compact,
# untracked-caching kind git recommends for large trees.
WORKTREE_CONFIG: tuple[str, ...] = (
    "core.fileMode=true", "core.symlinks=true", "core.trustctime=true", "core.checkStat=default",
    "core.ignoreStat=false", "feature.manyFiles=true",
)


@dataclass
class WorktreeState:
    """What the console knows of a held worktree: the commit it was handed out at or committed, whether
    everything in it is that commit (``worktree_committed``), its index as libgit2 read it and the change
    staged there."""

    head: str
    committed: bool = False
    # The holder's repository and index as libgit2 read them (graphs.workspaces.libgit), for the hold.
    native: Any = None
    # The change libgit2 staged, until anything runs in the worktree (graphs.workspaces.libgit.folder_touched).
    staged: Any = None
    # Whether it is a slot of the pool, given back rather than removed; and, once committed, its give-back's
    # sweep under way.
    pooled: bool = False
    sweeping: _Sweeping | None = None
    # What watches it for the paths an attempt touched (graphs.workspaces.watches); None where it is walked.
    watch: Any = None


@dataclass(frozen=True)
class Worktree:
    """A worktree of the repository at ``top``: ``git_dir`` is its git directory as git made it, and
    ``dot_git`` the text of the ``.git`` file that points there."""

    top: Path
    path: Path
    git_dir: Path
    dot_git: str
    state: WorktreeState = field(default_factory=lambda: WorktreeState(head=""), compare=False)


def worktree_committed(worktree: Worktree, head: str) -> None:
    """Say that ``head`` now holds everything in the worktree but what git ignores or cannot see (the
    holder's ``git add --all`` and commit were the last to touch it), so giving it back need not check
    its tracked files out again. A pooled worktree's give-back sweep begins now: nothing runs in it after
    its commit."""
    worktree.state.head = head
    worktree.state.committed = True
    if worktree.state.pooled and _touched_known(worktree) is None:
        worktree.state.sweeping = _Sweeping(worktree, counted=True)


@contextmanager
def worktree_held(top: Path, revision: str, *, root: Path, size: int, spare: Path) -> Iterator[Worktree]:
    """A worktree of ``top`` checked out at ``revision`` (detached) for the block: a free slot of the
    repository's pool under ``root``, or, every one of its ``size`` slots held, a worktree of its own at
    ``spare``, removed after. A process sandboxed in it meanwhile reads its git (``git_view``)."""
    folder = pool_folder(root, top)
    folder.mkdir(parents=True, exist_ok=True)
    for slot in range(size):
        lock = _slot_lock(folder / f"{slot}.lock")
        if lock is None:
            continue
        with lock:
            worktree = _slot_take(top, folder, slot, revision)
            worktree.state.pooled = True
            try:
                with git_view_held(worktree.path, worktree.git_dir):
                    yield worktree
            finally:
                _slot_give_back(worktree, folder / f"{slot}.clean")
        return
    worktree = worktree_add(top, spare, revision)
    try:
        with git_view_held(worktree.path, worktree.git_dir):
            yield worktree
    finally:
        worktree_remove(top, spare)


def pool_folder(root: Path, top: Path) -> Path:
    """Where the pool of the repository at ``top`` is kept: named after its git directory."""
    return root / "pool" / hashlib.sha256(str(repository_git_dir(top)).encode()).hexdigest()[:16]


def worktree_add(top: Path, path: Path, revision: str) -> Worktree:
    """Add a worktree at ``path``, checked out at ``revision``; its ``.git`` is read before anything but
    git has touched it."""
    with repository_locked(top):
        repository_git(top, *_config_argv(), "worktree", "add", "--detach", "--quiet", str(path), revision)
    dot_git = (path / ".git").read_text()
    return Worktree(top=top, path=path, git_dir=Path(dot_git.removeprefix("gitdir:").strip()), dot_git=dot_git,
                    state=WorktreeState(head=revision))


def worktree_remove(top: Path, path: Path) -> None:
    """Delete the worktree at ``path`` and git's record of it, however the attempt left it."""
    tree_delete(path)
    with repository_locked(top):
        done = repository_git_run(top, "worktree", "prune")
    if done.returncode != 0:
        logger.warning("could not prune the worktrees of %s: %s", top, done.stderr.strip())


def worktree_git(worktree: Worktree, *args: str) -> str:
    """Run git in ``worktree``, on the git directory git made for it; its stdout, or ``WorkspaceError``."""
    return git_checked(worktree_git_run(worktree, *args), args, raw=False)


def worktree_git_run(worktree: Worktree, *args: str) -> subprocess.CompletedProcess[bytes]:
    return git_command([*_config_argv(), *args], git_dir=worktree.git_dir, work_tree=worktree.path,
                       cwd=worktree.path, config_dir=repository_git_dir(worktree.top))


def tree_delete(path: Path) -> None:
    """Delete ``path`` (a folder, file or link; nothing when absent), giving back to the owner any folder
    it was made unable to write or enter on the way."""
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return

    try:
        shutil.rmtree(path)
    except OSError:
        # A folder made unwritable or unenterable: given back to its owner (symlinks are never followed).
        subprocess.run(["chmod", "-R", "u+rwx", "--", str(path)], capture_output=True, check=False)
        shutil.rmtree(path)


def _config_argv() -> list[str]:
    return [arg for setting in WORKTREE_CONFIG for arg in ("-c", setting)]


class _SlotLock:
    """An exclusive ``flock`` on a slot's lock file, held until the block ends."""

    def __init__(self, descriptor: int) -> None:
        self.descriptor = descriptor

    def __enter__(self) -> _SlotLock:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.descriptor)  # closing the file gives the lock back


def _slot_lock(path: Path) -> _SlotLock | None:
    """The slot's lock, or None when another attempt holds it."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return _SlotLock(descriptor)


def _slot_take(top: Path, folder: Path, slot: int, revision: str) -> Worktree:
    """The slot's worktree moved to ``revision`` and clean; added afresh when it is missing or cannot be."""
    path, record, clean_mark = folder / str(slot), folder / f"{slot}.gitdir", folder / f"{slot}.clean"
    clean_at = _mark_read(clean_mark)
    clean_mark.unlink(missing_ok=True)
    worktree = _slot_recorded(top, path, record, head=revision)
    if worktree is not None:
        try:
            # Left clean at this very commit, and watched since: anything touched means the mark lies.
            dirty = watch_dirty(worktree, revision)
            if clean_at != revision or dirty:
                _worktree_reset(worktree, revision, sweep=clean_at is None or dirty)
            watch_clean(worktree, revision, held=True)
            return worktree
        except (WorkspaceError, OSError) as error:
            logger.info("the pooled worktree %s is made again: %s", path, error)
        watch_dropped(worktree)
    record.unlink(missing_ok=True)
    worktree_remove(top, path)
    worktree = worktree_add(top, path, revision)
    record.write_text(worktree.dot_git)
    watch_clean(worktree, revision, held=True)
    return worktree


def _mark_read(clean_mark: Path) -> str | None:
    """The commit a slot was left clean at; "" for a mark that names none, None for no mark."""
    try:
        return clean_mark.read_text().strip()
    except OSError:
        return None


def _slot_give_back(worktree: Worktree, clean_mark: Path) -> None:
    """Leave the slot clean at its own head, or delete its worktree."""
    state = worktree.state
    sweeping, state.sweeping = state.sweeping, None
    try:
        if _intact(worktree):
            if sweeping is not None or not _touched_given_back(worktree):
                _worktree_reset(worktree, state.head, sweep=True, committed=state.committed, sweeping=sweeping)
            clean_mark.write_text(state.head)
            watch_clean(worktree, state.head, held=False)
            return
    except (WorkspaceError, OSError) as error:
        logger.info("the pooled worktree %s is deleted: %s", worktree.path, error)
    watch_dropped(worktree)
    worktree_remove(worktree.top, worktree.path)


def _touched_given_back(worktree: Worktree) -> bool:
    """Give back a worktree committed through libgit2 looking only at what its watch says was touched:
    what its index does not hold there deleted; False (nothing done) when that is not known for certain or
    not enough, and the worktree is reset as it would be without a watch."""
    changed = _touched_known(worktree) if worktree.state.committed else None
    leftovers = touched_leftovers(worktree.state.native[1], worktree.path, changed) if changed is not None else None
    if leftovers is None:
        return False
    for path in leftovers:
        tree_delete(worktree.path / path)
    return True


def _touched_known(worktree: Worktree) -> set[str] | None:
    """What the worktree's watch saw touched, where its index is libgit2's in memory to compare it with."""
    return touched(worktree) if worktree.state.native is not None else None


def _slot_recorded(top: Path, path: Path, record: Path, *, head: str) -> Worktree | None:
    """The slot's worktree as recorded when it was added, if it is still as git made it."""
    try:
        dot_git = record.read_text()
    except OSError:
        return None
    worktree = Worktree(top=top, path=path, git_dir=Path(dot_git.removeprefix("gitdir:").strip()), dot_git=dot_git,
                        state=WorktreeState(head=head))
    return worktree if _intact(worktree) else None


def _intact(worktree: Worktree) -> bool:
    """Whether the worktree's ``.git`` file and its git directory's links back are as git wrote them."""
    dot_git = worktree.path / ".git"
    if dot_git.is_symlink() or not dot_git.is_file() or dot_git.read_text(errors="replace") != worktree.dot_git:
        return False
    links = worktree.git_dir / "gitdir", worktree.git_dir / "commondir"
    if worktree.git_dir.parent != repository_git_dir(worktree.top) / "worktrees" or not all(map(Path.is_file, links)):
        return False
    return links[0].read_text().strip() == str(dot_git) and links[1].read_text().strip() == "../.."


def _worktree_reset(worktree: Worktree, revision: str, *, sweep: bool, committed: bool = False,
                    sweeping: _Sweeping | None = None) -> None:
    """Move the worktree to ``revision``: nothing of an attempt's left when ``sweep``, else (the worktree
    given back clean) only the files that differ rewritten. A ``committed`` worktree at ``revision``
    whose sweep finds nothing git cannot see keeps its tracked files as they are and loses only what is
    not in its index: nothing at all, when it holds just the files and folders its index does, else what
    ``git clean -ffdx`` deletes. ``sweeping`` is its sweep begun as it was committed."""
    if not sweep:
        _checkout(worktree, revision)
        return
    found, indexed = (sweeping or _Sweeping(worktree, counted=committed)).result()
    if committed and not found.unseen:
        if found.others != 0 or (found.files, found.symlinks, found.folders) != indexed:
            _clean(worktree)
        return
    for path in found.unseen:
        tree_delete(worktree.path / os.fsdecode(path))
    _checkout(worktree, revision)
    _clean(worktree)


def _checkout(worktree: Worktree, revision: str) -> None:
    worktree_git(worktree, "checkout", "--quiet", "--force", "--detach", "--no-recurse-submodules", revision)


def _clean(worktree: Worktree) -> None:
    done = worktree_git_run(worktree, "clean", "-ffdxq")
    # clean says what it failed to delete and still exits 0.
    if done.returncode != 0 or done.stderr.strip():
        raise WorkspaceError(f"git clean failed: {done.stderr.decode(errors='replace').strip()}")


class _Sweeping:
    """A worktree's sweep (``graphs.workspaces.sweeps``) and, when ``counted``, the counts of its index,
    each under way on a thread of its own from the moment it is made."""

    def __init__(self, worktree: Worktree, *, counted: bool) -> None:
        threads = ThreadPoolExecutor(max_workers=2)
        self.found: Future[Swept] = threads.submit(tree_swept, worktree.path)
        self.indexed: Future[tuple[int, int, int] | None] | None = (
            threads.submit(_index_counts, worktree) if counted else None)
        threads.shutdown(wait=False)

    def result(self) -> tuple[Swept, tuple[int, int, int] | None]:
        """The sweep, and the index's counts (None when not counted or not countable), once both are done."""
        return self.found.result(), self.indexed.result() if self.indexed is not None else None


def _index_counts(worktree: Worktree) -> tuple[int, int, int] | None:
    return index_counts(git_checked(worktree_git_run(worktree, *INDEX_LISTING), INDEX_LISTING, raw=True))
