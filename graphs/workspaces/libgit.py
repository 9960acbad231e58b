"""An attempt's change staged, committed and landed in-process through libgit2 (``pygit2``), where that
gives exactly what the console's git CLI gives; the CLI everywhere else.

The git CLI path (``graphs.workspaces.worktrees``) starts a git process for each step, and each reads
the worktree's whole index again. Here the index is read once per hold of a worktree and kept in memory:
staging is libgit2's ``add_all`` (git's ``add --all``: it re-reads only the files whose stat changed) —
or, in a pooled worktree whose watch knows what was touched (``graphs.workspaces.watches``), those paths
alone (``graphs.workspaces.touched``), with no look at the others — the changed paths are the diff of
the staged tree against ``HEAD``, and the commit, the worktree's ``HEAD`` and the move of the run's
branch are written by libgit2 — the branch under its ref lock, only from the head the landing was built
on, as ``git update-ref <ref> <new> <old>`` does.

A pooled worktree's index stays in memory after its landing writes it, for the next hold of that worktree in
the same process, which reads it again only when a git process has rewritten it since (libgit2 compares
the file's time, size and inode with those it wrote).

Staging walks the whole worktree, so its result is kept too: the write-set check's changed paths and the
landing's commit are one staging, one walk and one tree, unless something ran in the worktree between
them. Whatever the console runs or writes in an attempt's folder — an agent call, a command, a validator's
script — first calls ``folder_touched``, which drops the staging kept there; the next one walks again.

libgit2 runs no hook, file-system monitor, pager, credential helper or filter driver: it has none to
run, the console registers no filter, and ``SEARCH_PATHS`` below keeps it from the machine's and the
user's configuration, attributes and ignore files, as ``git_env`` keeps the CLI. So "git obeys only the
console" holds here by construction. What libgit2 does differently from git the console does not take:
``staged`` answers None, and the caller runs the CLI, when

- ``WORKGRAPH_GIT_BACKEND`` is ``cli``;
- the repository's configuration sets anything in ``CLI_SETTINGS`` (end-of-line conversion, sparse
  checkout, a split index, another object format, includes, filter drivers, case folding, a commit
  encoding...) or one of the stat settings the CLI pins (``pool.WORKTREE_CONFIG``) otherwise than it does;
- a changed path has an attribute under which git converts content on its way in
  (``CONVERTING_ATTRIBUTES``: a filter such as LFS, ``text``, ``eol``, ``ident``, an encoding);
- the change touches a submodule or a nested repository (libgit2 refuses to stage one that git would
  add as a gitlink), or libgit2 fails at any step before anything is written.

The merge of a landing whose branch moved stays ``git merge-tree``: libgit2's merge has no detection of
renamed folders, so its merged tree could differ from git's.
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import pygit2
from django.conf import settings
from pygit2._libgit2 import ffi, lib
from pygit2.enums import AttrCheck, ConfigLevel, FileMode, RepositoryOpenFlag
from pygit2.errors import check_error

from graphs.workspaces.git import COMMITTER, repository_git_dir, repository_git_run
from graphs.workspaces.touched import touched_staged
from graphs.workspaces.watches import touched

BACKENDS = ("auto", "cli")
# gitattributes(5) under which git rewrites a file's content as it stages it; libgit2 knows some of them and
# not all its ways, so a changed path under any of them is staged by the CLI.
CONVERTING_ATTRIBUTES = ("filter", "text", "eol", "crlf", "ident", "working-tree-encoding")
# Repository settings that make libgit2 stage or commit otherwise than the console's git: conversions,
# sparse and split indexes, case and Unicode folding, includes of other files, another object format,
# a commit encoding, and the attribute and exclude files the CLI points at /dev/null.
CLI_SETTINGS = frozenset({
    "core.autocrlf", "core.eol", "core.safecrlf", "core.attributesfile", "core.excludesfile",
    "core.sparsecheckout", "core.sparsecheckoutcone", "index.sparse", "core.splitindex", "core.ignorecase",
    "core.precomposeunicode", "core.checkstat", "core.ignorestat", "i18n.commitencoding", "include.path",
    "extensions.refstorage",
})
CLI_SECTIONS = ("filter.", "includeif.")
# What the console's git pins on its command line (pool.WORKTREE_CONFIG) and libgit2 reads from the
# configuration: a repository setting one false is staged by the CLI.
PINNED_TRUE = frozenset({"core.filemode", "core.symlinks", "core.trustctime"})
# libgit2 reads no configuration, attributes or ignore file of the machine's or the user's.
SEARCH_PATHS = (ConfigLevel.SYSTEM, ConfigLevel.XDG, ConfigLevel.GLOBAL, ConfigLevel.PROGRAMDATA)
for _level in SEARCH_PATHS:
    pygit2.settings.search_path[_level] = os.devnull
# The states of the held worktrees that keep a staging, by folder, for folder_touched to find; weak, so a
# worktree given back leaves nothing here.
_KEPT: weakref.WeakValueDictionary[Path, Any] = weakref.WeakValueDictionary()
_KEPT_LOCK = threading.Lock()
# The repository and index libgit2 last wrote to disk, by a pooled worktree's git directory and its inode (a
# worktree added again under the same name is another); taken out while a hold uses them.
_WRITTEN: dict[tuple[Path, int], tuple[pygit2.Repository, pygit2.Index]] = {}


@dataclass
class Staged:
    """A worktree's change staged in memory: the tree it makes, the ``HEAD`` it was made on, and the paths
    it adds, changes or deletes; ``folder`` is the worktree's, whose state keeps it, and ``git_dir`` its git
    directory."""

    repository: pygit2.Repository
    index: pygit2.Index
    head: str
    head_tree: str
    tree: str
    paths: list[str]
    folder: Path | None = None
    git_dir: Path | None = None


def backend_allows(top: Path) -> bool:
    """Whether the repository at ``top`` may be staged and landed through libgit2 at all."""
    return settings.WORKGRAPH_GIT_BACKEND != "cli" and _configuration_allows(repository_git_dir(top))


def staged(worktree: Any) -> Staged | None:
    """The worktree's whole change staged as ``git add --all`` stages it, without writing the index; None
    where the CLI must stage it. ``worktree.state.native`` keeps the index read from disk for the hold, and
    ``worktree.state.staged`` the change until anything runs in the worktree (``folder_touched``)."""
    if not backend_allows(worktree.top):
        return None
    if worktree.state.staged is not None:
        return worktree.state.staged
    try:
        repository, index = worktree.state.native or _opened(worktree)
        worktree.state.native = (repository, index)
        with _KEPT_LOCK:
            # Staging changes it in memory only: what is kept is what is on disk.
            _WRITTEN.pop(_written_key(worktree.git_dir), None)
        changed = touched(worktree)
        if changed is None or not touched_staged(repository, index, Path(worktree.path), changed):
            index.add_all()
        tree = index.write_tree(repository)
        head = repository.revparse_single("HEAD").peel(pygit2.Commit)
        deltas = list(head.tree.diff_to_tree(repository[tree]).deltas)
        if any(FileMode.COMMIT in (delta.old_file.mode, delta.new_file.mode) for delta in deltas):
            raise _Unlike
        paths = sorted({delta.new_file.path for delta in deltas} | {delta.old_file.path for delta in deltas})
        if any(_converted(repository, delta.new_file.path) for delta in deltas if delta.new_file.mode):
            raise _Unlike
    except (pygit2.GitError, OSError, _Unlike):
        # Nothing of it was written but objects no ref names: the CLI starts from the index on disk.
        worktree.state.native = None
        return None
    change = Staged(repository=repository, index=index, head=str(head.id), head_tree=str(head.tree_id),
                    tree=str(tree), paths=paths, folder=Path(worktree.path), git_dir=Path(worktree.git_dir))
    with _KEPT_LOCK:
        worktree.state.staged = change
        _KEPT[change.folder] = worktree.state
    return change


def folder_touched(folder: Path) -> None:
    """Something is about to run or be written in ``folder``: the staging kept for the worktree held there
    (if any) no longer says what it holds, and the next ``staged`` walks it again."""
    with _KEPT_LOCK:
        state = _KEPT.pop(Path(folder), None)
        if state is not None:
            state.staged = None


def staged_commit(change: Staged, message: str) -> str:
    """Write the staged index, and commit its tree on ``HEAD`` with ``message`` as ``git commit-tree``
    does (the console's identity, git's own trailing newline), moving ``HEAD`` to it; return the
    commit, or "" when the tree is ``HEAD``'s. The staging kept becomes what staging again would find:
    the commit, and no change on it."""
    change.index.write()
    with _KEPT_LOCK:
        state = _KEPT.get(change.folder) if change.folder is not None else None
        if state is not None and state.pooled and change.git_dir is not None:
            _WRITTEN[_written_key(change.git_dir)] = (change.repository, change.index)
    if change.tree == change.head_tree:
        return ""
    identity = _signature()
    commit = str(change.repository.create_commit(None, identity, identity, f"{message}\n", change.tree,
                                                 [change.head]))
    _ref_move(change.repository, "HEAD", commit, change.head, identity)
    with _KEPT_LOCK:
        state = _KEPT.get(change.folder) if change.folder is not None else None
        if state is not None and state.staged is change:
            state.staged = replace(change, head=commit, head_tree=change.tree, paths=[])
    return commit


def ref_commit(top: Path, ref: str) -> str | None:
    """The commit the full ref ``ref`` names, read in-process; None when it names none or the repository
    is the CLI's."""
    if not ref.startswith("refs/") or not backend_allows(top):
        return None
    try:
        found = _common(top).references.get(ref)
        return str(found.peel(pygit2.Commit).id) if found is not None else None
    except (pygit2.GitError, ValueError):
        return None


def ref_move(top: Path, ref: str, new: str, old: str) -> bool:
    """Move ``ref`` to ``new`` only from ``old`` (under its ref lock, as ``git update-ref <ref> <new> <old>``
    does, which the CLI's repositories run); whether it moved."""
    if not backend_allows(top):
        return repository_git_run(top, "update-ref", ref, new, old).returncode == 0
    try:
        _ref_move(_common(top), ref, new, old, _signature())
    except (pygit2.GitError, _Unlike):
        return False
    return True


class _Unlike(Exception):
    """What libgit2 would do here is not what git does (or the ref moved meanwhile)."""


def _ref_move(repository: pygit2.Repository, ref: str, new: str, old: str, identity: pygit2.Signature) -> None:
    with repository.transaction() as transaction:
        transaction.lock_ref(ref)
        # Read under the lock: no git process or libgit2 moves it until the transaction ends.
        current = repository.references.get(ref)
        if current is None or str(current.target) != old:
            raise _Unlike
        _target_set(transaction, ref, new, identity)


def _target_set(transaction: Any, ref: str, new: str, identity: pygit2.Signature) -> None:
    """``transaction.set_target`` with the console's identity on the reflog line, as git's update-ref
    writes it. pygit2 1.21 passes a signature to libgit2 as the wrong type (so every caller gets
    "unknown"); this hands it over as pygit2's own rebase does."""
    signature = ffi.new("git_signature **")
    ffi.buffer(signature)[:] = identity._pointer[:]
    oid = ffi.new("git_oid *")
    ffi.buffer(oid)[:] = pygit2.Oid(hex=new).raw
    check_error(lib.git_transaction_set_target(transaction._tx, ref.encode(), oid, signature[0], ffi.NULL))


def _converted(repository: pygit2.Repository, path: str) -> bool:
    """Whether git would convert ``path``'s content as it stages it (attributes from the worktree's files
    first, then the index's, as ``git add`` reads them)."""
    return any(repository.get_attr(path, name, AttrCheck.FILE_THEN_INDEX) is not None
               for name in CONVERTING_ATTRIBUTES)


def _opened(worktree: Any) -> tuple[pygit2.Repository, pygit2.Index]:
    """The worktree's repository as the console pins it — its git directory as git made it, its work tree
    where the console put it, never a ``.git`` the agent could rewrite — and its index read once: the one
    written last, read again only when a git process has rewritten it since."""
    with _KEPT_LOCK:
        kept = _WRITTEN.pop(_written_key(worktree.git_dir), None)
    if kept is not None and kept[0].workdir == f"{worktree.path}/":
        kept[1].read(False)
        return kept
    repository = pygit2.Repository(str(worktree.git_dir), RepositoryOpenFlag.NO_SEARCH)
    repository.workdir = str(worktree.path)
    return repository, repository.index


def _written_key(git_dir: Path) -> tuple[Path, int]:
    """A git directory's key in ``_WRITTEN``: its path, without a trailing slash, and its inode."""
    git_dir = Path(os.path.normpath(git_dir))
    try:
        return git_dir, git_dir.stat().st_ino
    except OSError:
        return git_dir, 0


def _common(top: Path) -> pygit2.Repository:
    # Opened per call: a pygit2 repository serves one thread, and a worker's attempts run on several.
    return pygit2.Repository(str(repository_git_dir(top)), RepositoryOpenFlag.NO_SEARCH)


def _signature() -> pygit2.Signature:
    return pygit2.Signature(COMMITTER["name"], COMMITTER["email"])


@lru_cache(maxsize=256)
def _configuration_allows(git_dir: Path) -> bool:
    """Whether the configuration of the repository at ``git_dir`` (its own file, and its worktrees' where
    it keeps one) sets nothing libgit2 would take otherwise than the console's git. Read once per process,
    as ``driver_overrides`` is: no agent reaches a repository's configuration from its sandbox."""
    entries: list[tuple[str, str]] = []
    for name in ("config", "config.worktree"):
        if (git_dir / name).is_file():
            try:
                entries += [(entry.name.lower(), entry.value or "") for entry in pygit2.Config(str(git_dir / name))]
            except pygit2.GitError:
                return False
    for name, value in entries:
        if name in CLI_SETTINGS or name.startswith(CLI_SECTIONS):
            return False
        if name in PINNED_TRUE and value.lower() not in ("true", "yes", "on", "1"):
            return False
        if name.startswith("extensions.") and name not in ("extensions.worktreeconfig", "extensions.noop") and \
                not (name == "extensions.objectformat" and value.lower() == "sha1"):
            return False
    return True
