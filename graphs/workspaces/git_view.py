"""The read-only view of its git an attempt's sandbox shows: enough of the repository's git directory for
``git status``, ``diff``, ``log``, ``show`` and ``blame`` in the worktree, nothing of it writable, none of
its secrets.

A worktree's ``.git`` file names the worktree's own git directory, ``<repository>/.git/worktrees/<name>``
(its HEAD and index), whose ``commondir`` names the repository's. In the sandbox the repository's git
directory is a folder the console makes for the call and binds read-only — nothing can be created,
renamed or deleted in it — holding:

- ``config``, written by the console: only what says how to read the repository and compare a file (its
  format and extensions, its line endings). No remote, credential, header, hook, filter, driver or program
  of the repository's configuration is there (a remote's URL or an ``http.extraHeader`` may hold a token);
  the stat rules stay at git's defaults, which are the ones the console's own git pins;
- the repository's ``objects`` (and the object folders its ``objects/info/alternates`` names), ``refs``,
  ``packed-refs``, ``HEAD``, ``shallow``, ``info`` and ``reftable``, each bound read-only;
- ``worktrees/<name>``: the attempt's own worktree's git directory, read-only; no other worktree's.

The hooks, the logs and the console's lock file are not there at all: a read-only file can still be
locked, and an agent holding the repository's lock would stall every other attempt of the project.

So the agent's ``git add``, ``commit``, ``checkout``, ``stash``, ``update-index`` and ``config`` fail ("Read-only
file system"), and nothing an agent does changes what the console's git reads: the attempt's change is
committed by the console alone, from its own index.

Which git directory a worktree has is the console's record of it from when git made the worktree
(``git_view_held``), looked up by the folder a sandboxed process works in: a ``.git`` the agent rewrote is
never followed. Git's ownership check passes without ``safe.directory``: the sandbox maps the console's
user to itself, and the worktree, its ``.git`` file and its git directory are the console's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graphs.workspaces.git import git_env

# What of the repository's git directory the view holds besides its config and the worktree's own.
SHARED_ENTRIES = ("objects", "refs", "reftable", "packed-refs", "HEAD", "shallow", "info")
# The settings of the repository's config the view's config keeps: how its objects and refs are stored,
# and how a file's content is compared. None names a program or a file.
VIEW_SETTINGS = re.compile(
    r"^(core\.(repositoryformatversion|autocrlf|eol|safecrlf|ignorecase|precomposeunicode)"
    r"|extensions\.(objectformat|compatobjectformat|refstorage))$"
)
# A kept setting's value is a word (a number, true, input, sha256, reftable): anything else is dropped.
_PLAIN_VALUE = re.compile(r"^[A-Za-z0-9_.-]+$")
_CONFIG_TIMEOUT_SECONDS = 30

_held: dict[Path, Path] = {}
_held_lock = threading.Lock()


@contextmanager
def git_view_held(worktree: Path, git_dir: Path) -> Iterator[None]:
    """For the block, a process sandboxed in ``worktree`` gets the read-only view of ``git_dir`` (the
    worktree's git directory as git made it) and of its repository."""
    key = worktree.resolve()
    with _held_lock:
        _held[key] = git_dir
    try:
        yield
    finally:
        with _held_lock:
            _held.pop(key, None)


@contextmanager
def git_view_mounts(workdir: Path) -> Iterator[list[tuple[Path, Path]]]:
    """The read-only binds (source, place in the sandbox), in order, that show the git of the worktree at
    ``workdir``; none when ``workdir`` is no worktree the console holds. The folder standing for the
    repository's git directory is removed after the block."""
    with _held_lock:
        git_dir = _held.get(workdir.resolve())
    if git_dir is None or git_dir.parent.name != "worktrees":
        yield []
        return
    folder = Path(tempfile.mkdtemp(prefix="workgraph-git-"))
    try:
        yield _view_made(folder, common=git_dir.parent.parent, git_dir=git_dir)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _view_config(common: Path) -> str:
    """The config of the view of the repository whose git directory is ``common``: its settings that
    ``VIEW_SETTINGS`` keeps, read from its own config file alone (no include is followed)."""
    done = subprocess.run(
        ["git", "config", "--file", str(common / "config"), "--get-regexp", VIEW_SETTINGS.pattern],
        capture_output=True, text=True, env=git_env(), timeout=_CONFIG_TIMEOUT_SECONDS, check=False,
    )
    lines = []
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        section, _, name = key.partition(".")
        if VIEW_SETTINGS.match(key) and _PLAIN_VALUE.match(value):
            lines.append(f"[{section}]\n\t{name} = {value}\n")
    return "".join(lines)


def _view_made(folder: Path, *, common: Path, git_dir: Path) -> list[tuple[Path, Path]]:
    """Fill ``folder`` as the repository's git directory in the sandbox: its config, and a place for each
    entry bound over it; return the binds."""
    (folder / "config").write_text(_view_config(common))
    mounts = [(folder, common)]
    for name in SHARED_ENTRIES:
        source = common / name
        if source.is_dir():
            (folder / name).mkdir()
        elif source.is_file():
            (folder / name).touch()
        else:
            continue
        mounts.append((source, common / name))
    (folder / "worktrees" / git_dir.name).mkdir(parents=True)
    mounts.append((git_dir, git_dir))
    return [*mounts, *((path, path) for path in _alternates(common))]


def _alternates(common: Path) -> list[Path]:
    """The object folders ``objects/info/alternates`` names (relative ones from ``objects``), where they
    exist: a repository cloned with ``--shared`` or ``--reference`` keeps most of its objects there."""
    objects = common / "objects"
    try:
        listed = (objects / "info" / "alternates").read_text(errors="replace").splitlines()
    except OSError:
        return []
    folders = [Path(os.path.normpath(objects / line.strip())) for line in listed
               if line.strip() and not line.startswith(("#", '"'))]
    return [folder for folder in folders if folder.is_dir()]
