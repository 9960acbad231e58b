"""Whether a failure met a full disk, whatever the failing program called it.

git and libgit2 do not always pass ENOSPC on: a full disk reads "unable to write new index file", "Out of
diskspace", a failed write or a worktree half added. So a failure counts as a full disk when its
exception carries ENOSPC or EDQUOT, when its text has the operating system's own words for either, or
when a filesystem it wrote on has (all but) no room left at the moment it failed — read before the
attempt's worktree is given back or anyone sees the failure, both of which may free space.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import DatabaseError

from graphs.workspaces.git import WorkspaceError

DISK_FULL = os.strerror(errno.ENOSPC)
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_FULL_WORDS = tuple(os.strerror(number) for number in _FULL_ERRNOS)
# Below this much free space a filesystem counts as full: what a failed write leaves free is less than a
# page of a worktree's files per failed writer, far under a megabyte.
DISK_FULL_BYTES = 1 << 20


class DiskFullError(WorkspaceError):
    """An attempt's workspace failed on a full disk; its text names it (``DISK_FULL``)."""


def disk_full_reason(error: BaseException, folders: Iterable[str | Path | None]) -> str:
    """Why ``error`` counts as a full disk, naming it ("No space left on device …"); "" when it does not."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DiskFullError):
            return str(current)
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return f"{DISK_FULL} ({errno.errorcode[current.errno]})"
        if any(words in str(current) for words in _FULL_WORDS):
            return DISK_FULL
        current = current.__cause__ or current.__context__
    return _folders_full(folders)


def _folders_full(folders: Iterable[str | Path | None]) -> str:
    for folder in folders:
        if not folder:
            continue
        try:
            free = shutil.disk_usage(folder).free
        except OSError:
            continue
        if free < DISK_FULL_BYTES:
            return f"{DISK_FULL}: {free} bytes free on the filesystem of {folder}"
    return ""


@contextmanager
def disk_full_named(folders: Iterable[str | Path | None]) -> Iterator[None]:
    """Raise a failure of the block that met a full disk on ``folders`` as ``DiskFullError`` (from it), its
    text naming the fault. A lost database is left as it is: it has a handling of its own."""
    try:
        yield
    except DiskFullError:
        raise
    except DatabaseError:
        raise
    except Exception as error:
        reason = disk_full_reason(error, folders)
        if not reason:
            raise
        text = str(error) if isinstance(error, WorkspaceError) else repr(error)
        raise DiskFullError(text if DISK_FULL in text else f"{text}; {reason}") from error
