"""What an attempt changed in a pooled worktree, learnt from inotify rather than a walk of the whole tree.

Each process keeps, for each pooled worktree it has held, an inotify watch on every folder and every
regular file of it, for as long as that worktree lives (``MAX_WATCHED`` worktrees a process at most, the
least recently held let go first); between two holds it keeps watching, another process's hold included.
What it gathers is the set of paths (relative to the worktree's top) touched since the worktree was last
left clean at a commit by this process: a name created, deleted, moved in or out, or a file or folder
written, truncated, closed after writing or given other permissions. A folder created or moved in is
watched, then listed, and everything in it is touched — so what was written there before its watch was
added is touched too. A touched folder stands for everything below it.

A watch on each file, not only on each folder, is what makes a hard link harmless: a write through
another name of a file reaches the file's own watch, which names the file's path here, whichever name it
came through. The nlink check (``touched`` refuses a set naming a regular file with more than one link)
is kept besides, for a set that does not hold what it should where a second name is in play. Inside the
sandbox no link can come from outside the worktree at all: ``bwrap`` binds the worktree on a mount of its
own, and ``link(2)`` across two mounts fails with ``EXDEV``, the same filesystem or not.

The set is trusted only when the watch has been unbroken since the worktree was left clean: the kernel's
queue never overflowed, no watch failed to be added (``max_user_watches`` reached, say), and the worktree
was made clean at the head it is at while this process watched. Otherwise ``touched`` is None, and the
caller walks the tree as it would without a watch; so does any machine without inotify. Events are read
when asked for (``touched``, ``watch_clean``), after the attempt's processes have all ended: a write
through a shared mapping is seen as the file's last closing, which is its writer's end.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    from inotify_simple import INotify
    from inotify_simple import flags as inotify_flags
except ImportError:  # inotify is Linux's; elsewhere every worktree is walked
    INotify = None

logger = logging.getLogger(__name__)

# How many pooled worktrees a process keeps watching when none of its attempts holds them; each takes an
# inotify instance (128 a user by default).
MAX_WATCHED = 8

if INotify is not None:
    _CHANGES = (inotify_flags.MODIFY | inotify_flags.ATTRIB | inotify_flags.CLOSE_WRITE | inotify_flags.DONT_FOLLOW)
    _FOLDER_MASK = (_CHANGES | inotify_flags.CREATE | inotify_flags.DELETE | inotify_flags.MOVED_FROM
                    | inotify_flags.MOVED_TO | inotify_flags.DELETE_SELF | inotify_flags.MOVE_SELF
                    | inotify_flags.ONLYDIR)
    _NAMED = inotify_flags.CREATE | inotify_flags.MOVED_TO
    _UNNAMED = inotify_flags.DELETE | inotify_flags.MOVED_FROM
    _OVERFLOW = inotify_flags.Q_OVERFLOW
    _GONE = inotify_flags.IGNORED

# The watches kept, by worktree folder, the least recently held first.
_WATCHES: OrderedDict[str, Watch] = OrderedDict()
# The worktrees (folder, git directory's inode) a watch could not be had for: walked from then on, rather than
# listed again each time only to meet the same limit.
_REFUSED: set[tuple[str, int]] = set()
_LOCK = threading.Lock()


@dataclass
class Watch:
    """The inotify watch of one worktree (``git_dir`` is the inode of its git directory: a worktree added
    again at the same place is another): ``names`` maps each watch descriptor to the paths it was added
    for (a file may have several names), ``touched`` is what changed since ``clean_at``, and ``broken``
    says something may have been missed."""

    top: Path
    git_dir: int
    notify: Any
    names: dict[int, set[str]] = field(default_factory=dict)
    # Each path's watch descriptor: what a name deleted or moved away no longer stands for.
    named: dict[str, int] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)
    broken: bool = False
    clean_at: str = ""
    # Whether an attempt of this process holds the worktree now: its watch is never let go meanwhile.
    held: bool = False

    def scan(self, path: str, *, mark: bool) -> None:
        """Watch ``path`` and, for a folder, everything below it (each folder watched before it is listed);
        with ``mark``, touch each path found."""
        if mark:
            self.touched.add(path)
        # What is below is listed from folders found here, each a folder itself and not a symlink.
        pending = [path] if self._real(path.rpartition("/")[0]) else []
        while pending and not self.broken:
            current = pending.pop()
            if mark:
                self.touched.add(current)
            if not self._watched(current):
                continue
            try:
                entries = [entry.name for entry in os.scandir(self.top / current)]
            except NotADirectoryError:
                continue
            except OSError:
                self.touched.add(current)
                continue
            pending += [f"{current}/{name}" if current else name for name in entries]

    def drain(self) -> None:
        """Read every event queued so far."""
        while not self.broken:
            events = self.notify.read(timeout=0)
            if not events:
                return
            for event in events:
                self._event(event)

    def _event(self, event: Any) -> None:
        if event.mask & _OVERFLOW:
            self.broken = True
            return
        if event.mask & _GONE:
            for name in self.names.pop(event.wd, ()):
                if self.named.get(name) == event.wd:
                    del self.named[name]
            return
        for base in list(self.names.get(event.wd, ())):
            if not event.name:
                self.touched.add(base)
                continue
            path = f"{base}/{event.name}" if base else event.name
            self.touched.add(path)
            if event.mask & _UNNAMED:
                self._unnamed(path, folder=bool(event.mask & inotify_flags.ISDIR))
            if event.mask & _NAMED:
                self.scan(path, mark=True)

    def _unnamed(self, path: str, *, folder: bool) -> None:
        """``path`` (and, for a folder, every path below it) no longer names what it was watched for."""
        prefix = f"{path}/"
        for name in [name for name in self.named if name.startswith(prefix)] if folder else []:
            self._name_dropped(name)
        self._name_dropped(path)

    def _name_dropped(self, name: str) -> None:
        descriptor = self.named.pop(name, None)
        if descriptor is not None:
            self.names.get(descriptor, set()).discard(name)

    def _real(self, folder: str) -> bool:
        """Whether ``folder`` is reached from the top through folders only, never a symlink (which could
        lead the watch out of the worktree)."""
        full = os.path.join(self.top, folder) if folder else str(self.top)
        return os.path.realpath(full) == full

    def _watched(self, path: str) -> bool:
        """Add the watch of ``path`` (a folder or a regular file; nothing for anything else); whether it is a
        folder now watched. A path gone meanwhile is left to the event that says so."""
        try:
            mode = os.lstat(self.top / path).st_mode
        except OSError:
            return False
        folder = stat.S_ISDIR(mode)
        if not folder and not stat.S_ISREG(mode):
            return False
        try:
            descriptor = self.notify.add_watch(os.fsencode(self.top / path) if path else os.fsencode(self.top),
                                               _FOLDER_MASK if folder else _CHANGES)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as error:
            logger.info("the worktree %s is walked, a watch failed: %s", self.top, error)
            self.broken = True
            return False
        if folder:
            # A folder has one name: one moved keeps its descriptor, and answers to its new name from now on.
            for name in self.names.get(descriptor, ()):
                if self.named.get(name) == descriptor:
                    del self.named[name]
            self.names[descriptor] = {path}
        else:
            self.names.setdefault(descriptor, set()).add(path)
        self.named[path] = descriptor
        return folder

    def close(self) -> None:
        self.broken = True
        self.notify.close()


def touched(worktree: Any) -> set[str] | None:
    """The paths touched in ``worktree`` since it was left clean at its head, every event queued so far
    read; None when that is not known for certain (no watch, a broken one, a touched file with a second
    name). Call it only once every process that worked in the worktree has ended."""
    watch = getattr(worktree.state, "watch", None)
    if watch is None:
        return None
    watch.drain()
    if watch.broken or "" in watch.touched:
        return None
    for path in watch.touched:
        try:
            status = os.lstat(watch.top / path)
        except OSError:
            continue
        if stat.S_ISREG(status.st_mode) and status.st_nlink > 1:
            return None
    return set(watch.touched)


def watch_dirty(worktree: Any, head: str) -> bool:
    """Whether this process, watching since it left ``worktree`` clean at ``head``, saw anything touched there
    since: the slot's clean mark then does not hold, and it is reset whole."""
    with _LOCK:
        watch = _WATCHES.get(str(worktree.path))
    if watch is None or watch.git_dir != _git_dir(worktree) or watch.clean_at != head:
        return False
    watch.drain()
    return watch.broken or bool(watch.touched)


def watch_clean(worktree: Any, head: str, *, held: bool) -> None:
    """``worktree`` is clean at ``head`` now, and ``held`` by an attempt of this process or given back: what
    is touched from here on is the next attempt's. Starts watching it (a walk of the whole tree, once a
    process) where no unbroken watch is kept."""
    key, git_dir = str(worktree.path), _git_dir(worktree)
    with _LOCK:
        watch = _WATCHES.pop(key, None)
    if watch is not None:
        watch.drain()
        if watch.broken or watch.git_dir != git_dir:
            watch.close()
            watch = None
    if watch is None and (key, git_dir) not in _REFUSED:
        watch = _started(Path(worktree.path), git_dir)
        if watch is None:
            with _LOCK:
                _REFUSED.add((key, git_dir))
    worktree.state.watch = watch
    if watch is None:
        return
    watch.touched.clear()
    watch.clean_at, watch.held = head, held
    with _LOCK:
        _WATCHES[key] = watch
        # A worktree deleted since (its repository's too) frees its inotify instance at once: instances are
        # few a user (fs.inotify.max_user_instances), and other programs need theirs.
        for name in [name for name, kept in _WATCHES.items() if not kept.held and not kept.top.is_dir()]:
            _WATCHES.pop(name).close()
        idle = [name for name, kept in _WATCHES.items() if not kept.held]
        for name in idle[:max(0, len(_WATCHES) - MAX_WATCHED)]:
            _WATCHES.pop(name).close()


def watch_dropped(worktree: Any) -> None:
    """Stop watching ``worktree`` (it is deleted, or left unclean)."""
    worktree.state.watch = None
    with _LOCK:
        watch = _WATCHES.pop(str(worktree.path), None)
    if watch is not None:
        watch.close()


def _started(top: Path, git_dir: int) -> Watch | None:
    if INotify is None:
        return None
    try:
        watch = Watch(top=Path(os.path.realpath(top)), git_dir=git_dir, notify=INotify())
    except OSError as error:
        logger.info("the worktree %s is walked, no inotify instance: %s", top, error)
        return None
    watch.scan("", mark=False)
    watch.drain()
    if watch.broken:
        watch.close()
        return None
    return watch


def _git_dir(worktree: Any) -> int:
    try:
        return os.stat(worktree.git_dir).st_ino
    except OSError:
        return 0
