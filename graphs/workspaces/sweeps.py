"""A walk of a pooled worktree as its give-back needs it: what ``git clean`` and ``git checkout`` cannot see
or set, and how many files, symlinks and folders it holds, to compare with what its index holds
(``graphs.workspaces.pool``).

The walk is ``find``, ``SWEEP_WALKS`` processes at once, each over a share of the top's entries: it is
system calls, most of its time spent in the kernel, and several walks at once keep both cores busy.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from graphs.workspaces.git import WorkspaceError

SWEEP_WALKS = 4
# What lists an index for index_counts: each entry's tag, mode, object, stage and path.
INDEX_LISTING = ("ls-files", "-z", "--stage", "-t")


@dataclass(frozen=True)
class Swept:
    """A walk of a worktree below its top. ``unseen`` is what ``git clean`` and ``git checkout`` would
    leave — a ``.git`` below the top, and folders and files whose permissions are not those a checkout
    gives (git sets only a file's executable bit); then how many regular files, symlinks, folders and
    other entries (fifos, sockets, devices) it holds."""

    unseen: list[bytes]
    files: int
    symlinks: int
    folders: int
    others: int


def tree_swept(path: Path) -> Swept:
    """Walk the worktree below its top in ``SWEEP_WALKS`` processes at once, each over a share of the
    top's entries (its ``.git`` file aside)."""
    top = os.fsencode(path) + b"/"
    starts = sorted(top + name for name in os.listdir(top) if name != b".git")
    shares = [starts[walk::SWEEP_WALKS] for walk in range(SWEEP_WALKS) if starts[walk::SWEEP_WALKS]]
    with ThreadPoolExecutor(max_workers=SWEEP_WALKS) as walks:
        records = [record for share in walks.map(_walk, shares) for record in share]
    named = [record for record in records if len(record) > 1]
    return Swept(
        unseen=[record[1 + len(top):] for record in named if record[:1] in b"gu"],
        files=records.count(b"f"), symlinks=records.count(b"l"), folders=records.count(b"d"),
        others=records.count(b"o"),
    )


def _walk(starts: list[bytes]) -> list[bytes]:
    """One ``find`` over ``starts`` (absolute paths, read from its stdin, so no name is ever taken for an
    option): a record of each entry, named only when it needs a name."""
    folder, plain, executable = (f"{mode:o}" for mode in checkout_modes())
    done = subprocess.run(
        ["find", "-files0-from", "-",
         "(", "-name", ".git", "-prune", "-printf", "g%p\\0", ")",
         "-o", "(", "-type", "d", "(", "!", "-perm", folder, "-printf", "u%p\\0", "-o", "-printf", "d\\0", ")", ")",
         "-o", "(", "-type", "f", "(", "-perm", plain, "-o", "-perm", executable, ")", "-printf", "f\\0", ")",
         "-o", "(", "-type", "f", "-printf", "u%p\\0", ")",
         "-o", "(", "-type", "l", "-printf", "l\\0", ")",
         "-o", "-printf", "o\\0"],
        input=b"\0".join(starts), capture_output=True, check=False,
    )
    if done.returncode != 0:
        raise WorkspaceError(f"could not list the worktree: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.split(b"\0")


def checkout_modes() -> tuple[int, int, int]:
    """The permissions a checkout gives a folder, a file and an executable file, under this process's umask."""
    return 0o777 & ~_UMASK, 0o666 & ~_UMASK, 0o777 & ~_UMASK


def index_counts(listed: bytes) -> tuple[int, int, int] | None:
    """How many regular files, symlinks and folders (those holding them, up to the top) an index holds,
    from its listing by ``git ls-files -z --stage -t`` (``INDEX_LISTING``), or None when it holds anything
    else — a submodule, or an entry unmerged or marked skip-worktree — which no count of a folder's entries
    can be held to."""
    # Each entry is "<tag> <mode> <object> <stage>\t<path>" ended by a NUL, which no path holds.
    entries = b"\0" + listed
    regular = entries.count(b"\0H 100644 ") + entries.count(b"\0H 100755 ")
    symlinks = entries.count(b"\0H 120000 ")
    if regular + symlinks != listed.count(b"\0"):
        return None
    folders: set[bytes] = set()
    for parent in {entry.partition(b"\t")[2].rpartition(b"/")[0] for entry in listed.split(b"\0")}:
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition(b"/")[0]
    return regular, symlinks, len(folders)


def _umask() -> int:
    """The process's umask, read without setting it (``os.umask`` would change it for every thread)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0o022
    found = re.search(r"^Umask:\s+([0-7]+)$", status, re.MULTILINE)
    return int(found.group(1), 8) if found else 0o022


_UMASK = _umask()
