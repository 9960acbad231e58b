"""An attempt's change staged, and its worktree checked on its give-back, looking only at the paths its
watch says were touched (``graphs.workspaces.watches``) instead of at every file.

``touched_staged`` gives the index exactly what libgit2's ``add_all`` would: each touched path that is a
file or symlink is added (tracked, or untracked and not ignored), each gone is removed, a touched folder
stands for everything in it (what it holds added, what the index holds below it and it no longer does
removed), a file become a folder or a folder a file loses its old entries. Anything whose staging by
``add_all`` is its own business — a ``.git`` below the top (a nested repository), a fifo, socket or
device, a name that is not UTF-8, a file with a second name — and it answers False, having changed
nothing: the caller stages with ``add_all``.

``touched_leftovers`` decides, for the touched paths only, what the give-back's sweep and the counts of
the index decide of a committed worktree: what is neither in the index nor below a folder holding an
entry of it (an untracked or ignored file, symlink, fifo or folder) is deleted; anything git could not
see or set (a ``.git`` below the top, permissions a checkout does not give, a tracked path whose type or
executable bit is not its entry's) and it answers None: the worktree is reset whole.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from graphs.workspaces.sweeps import checkout_modes


def touched_staged(repository: pygit2.Repository, index: pygit2.Index, top: Path, paths: set[str]) -> bool:
    """Stage the touched ``paths`` of the worktree at ``top`` into ``index`` as ``add_all`` would stage the
    whole worktree; False (``index`` untouched) where only ``add_all`` may say what it stages."""
    added: set[str] = set()
    removed: set[str] = set()
    folders = _Folders(top)
    for path in sorted(paths - {".git"}):
        if not _plain(path):
            return False
        status = folders.status(path)
        if status is None:
            removed |= _under(index, path, itself=True)
        elif stat.S_ISREG(status.st_mode) or stat.S_ISLNK(status.st_mode):
            if stat.S_ISREG(status.st_mode) and status.st_nlink > 1:
                return False
            removed |= _under(index, path, itself=False)
            if path in index or not repository.path_is_ignored(path):
                added.add(path)
        elif stat.S_ISDIR(status.st_mode):
            found = _files_below(top, path)
            if found is None or not all(map(_plain, found)):
                return False
            removed |= _under(index, path, itself=True) - set(found)
            added |= {name for name in found if name in index or not repository.path_is_ignored(name)}
        else:
            return False
    for path in sorted(removed - added):
        index.remove(path)
    for path in sorted(added):
        index.add(path)
    return True


def touched_leftovers(index: pygit2.Index, top: Path, paths: set[str]) -> list[str] | None:
    """What of the touched ``paths`` of a committed worktree at ``top`` its give-back deletes, its index
    being ``index``; None when it must be reset whole."""
    folder_mode, *file_modes = checkout_modes()
    folders = _Folders(top)
    pending = sorted(paths - {".git"})
    # A folder whose every entry was deleted stays on disk; the folders above a touched path are looked at too.
    leftovers = _emptied(index, folders, pending)
    while pending:
        path = pending.pop()
        if path == "" or not _plain(path) or path.rpartition("/")[2] == ".git":
            return None
        status = folders.status(path)
        tracked = _mode(index, path)
        if status is None:
            if tracked is not None or _under(index, path, itself=False):
                return None
            continue
        if stat.S_ISDIR(status.st_mode):
            if tracked is not None or stat.S_IMODE(status.st_mode) != folder_mode:
                return None
            if not _under(index, path, itself=False):
                leftovers.append(path)
                continue
            pending += [f"{path}/{entry.name}" for entry in os.scandir(top / path)]
        elif tracked is None:
            leftovers.append(path)
        elif _under(index, path, itself=False) or _entry_mode(status) != tracked:
            return None
        elif stat.S_ISREG(status.st_mode) and (stat.S_IMODE(status.st_mode) not in file_modes
                                                or status.st_nlink > 1):
            return None
    return leftovers


def _emptied(index: pygit2.Index, folders: _Folders, paths: list[str]) -> list[str]:
    """The outermost folders above ``paths`` that are there and hold no entry of the index."""
    emptied: list[str] = []
    seen: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder in emptied:
                break
            if folder in seen:
                continue
            seen.add(folder)
            if folders.folder(folder) and not _under(index, folder, itself=False):
                emptied.append(folder)
                break
    return emptied


class _Folders:
    """Which paths below a top are reached through real folders only (never through a symlink), each
    folder looked at once."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.known: dict[str, bool] = {"": True}

    def status(self, path: str) -> os.stat_result | None:
        """``path``'s own status, or None when it or one of its folders is not there as such."""
        if not self.folder(path.rpartition("/")[0]):
            return None
        try:
            return os.lstat(self.top / path)
        except OSError:
            return None

    def folder(self, path: str) -> bool:
        """Whether ``path`` is a folder reached through folders only."""
        if path not in self.known:
            parent_real = self.folder(path.rpartition("/")[0])
            try:
                self.known[path] = parent_real and stat.S_ISDIR(os.lstat(self.top / path).st_mode)
            except OSError:
                self.known[path] = False
        return self.known[path]


def _files_below(top: Path, folder: str) -> list[str] | None:
    """The files and symlinks below ``folder`` (never through a symlink); None when it holds a ``.git``,
    something neither a file, a symlink nor a folder, or a file with a second name."""
    found: list[str] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(top / current))
        except NotADirectoryError:
            return None
        except FileNotFoundError:
            continue
        for entry in entries:
            path = f"{current}/{entry.name}"
            status = entry.stat(follow_symlinks=False)
            if entry.name == ".git" or not (stat.S_ISREG(status.st_mode) or stat.S_ISLNK(status.st_mode)
                                             or stat.S_ISDIR(status.st_mode)):
                return None
            if stat.S_ISDIR(status.st_mode):
                pending.append(path)
            elif stat.S_ISREG(status.st_mode) and status.st_nlink > 1:
                return None
            else:
                found.append(path)
    return found


def _under(index: pygit2.Index, path: str, *, itself: bool) -> set[str]:
    """The index's entries below the folder ``path`` (and ``path`` itself, with ``itself``): found by a
    binary search of the index, which is sorted by path, without reading every entry."""
    prefix = f"{path}/"
    low, high = 0, len(index)
    while low < high:
        middle = (low + high) // 2
        if index[middle].path < prefix:
            low = middle + 1
        else:
            high = middle
    below = set()
    while low < len(index) and (name := index[low].path).startswith(prefix):
        below.add(name)
        low += 1
    if itself and path in index:
        below.add(path)
    return below


def _mode(index: pygit2.Index, path: str) -> int | None:
    try:
        return index[path].mode
    except KeyError:
        return None


def _entry_mode(status: os.stat_result) -> int:
    """The mode git gives a file or symlink in its index."""
    if stat.S_ISLNK(status.st_mode):
        return FileMode.LINK
    return FileMode.BLOB_EXECUTABLE if status.st_mode & stat.S_IXUSR else FileMode.BLOB


def _plain(path: str) -> bool:
    """Whether ``path`` is a name the index holds as it is: UTF-8, and no ``.git`` in it."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return ".git" not in path.split("/")
