"""What the console checks of an attempt's worktree after its agent or command ran, before it commits.

Two things an agent could leave there would turn the console's own git against it or against the
machine: a changed ``.git`` (pointing the worktree at another repository, or replaced by a repository
of the agent's own) and a symlink out of the worktree (which a later attempt, a command's ``cd`` or a
reviewer's checkout would follow). The first fails the attempt ``workspace_tampered`` and nothing is
committed; the second fails its judgment as a ``write_set`` violation does, naming the links. The
node's own ``write_set`` and ``forbidden_paths`` are checked here too.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from graphs.workspaces.worktrees import AttemptWorkspace

# The files of a worktree's git directory that say which repository and worktree it belongs to; an
# unconfined agent could rewrite them, a sandboxed one cannot reach them.
GIT_DIR_LINKS = ("gitdir", "commondir")


def workspace_tampering(workspace: AttemptWorkspace, *, git_dir_links: dict[str, bytes]) -> list[str]:
    """What the attempt changed of its worktree's git plumbing, one sentence each; [] when it is as the
    console made it. ``git_dir_links`` are the files of ``GIT_DIR_LINKS`` as they were before the agent ran."""
    problems = []
    dot_git = workspace.path / ".git"
    if not os.path.lexists(dot_git):
        problems.append("the worktree's .git file was deleted")
    elif dot_git.is_symlink():
        problems.append(f"the worktree's .git was replaced by a symlink to {os.readlink(dot_git)}")
    elif dot_git.is_dir():
        problems.append("the worktree's .git file was replaced by a repository of the agent's own")
    elif dot_git.read_bytes() != workspace.dot_git.encode():
        said = dot_git.read_bytes()[:200].decode("utf-8", errors="replace").strip()
        problems.append(f"the worktree's .git file was rewritten: it says {said!r}, not {workspace.dot_git.strip()!r}")
    for name, before in git_dir_links.items():
        if _read(workspace.git_dir / name) != before:
            problems.append(f"the worktree's git directory file {name} was changed")
    return problems


def git_dir_links_read(workspace: AttemptWorkspace) -> dict[str, bytes]:
    """The files of ``GIT_DIR_LINKS`` as they are now, for ``workspace_tampering`` to compare with."""
    return {name: _read(workspace.git_dir / name) for name in GIT_DIR_LINKS}


def escaping_symlinks(top: Path, paths: Sequence[str]) -> list[str]:
    """Of ``paths`` (relative to ``top``), the symlinks whose target is absolute or climbs out of
    ``top`` (through ``..`` past its top, or through another symlink that does), as ``path -> target``."""
    root = top.resolve()
    escaping = []
    for path in paths:
        link = top / path
        if not link.is_symlink():
            continue
        target = os.readlink(link)
        inside = PurePosixPath(path).parent / target
        if PurePosixPath(target).is_absolute() or ".." in _normalized(inside).parts or not _within(link, root):
            escaping.append(f"{path} -> {target}")
    return escaping


def write_set_violations(node: dict, paths: Sequence[str]) -> list[str]:
    """What of ``paths`` the node may not change: outside its ``write_set`` globs, or in its
    ``forbidden_paths``; one sentence each, naming the paths."""
    write_set = [str(glob) for glob in node.get("write_set") or []]
    forbidden = [str(glob) for glob in node.get("forbidden_paths") or []]
    problems = []
    outside = [path for path in paths if write_set and not any(_glob_match(path, glob) for glob in write_set)]
    if outside:
        problems.append(f"changed outside its write_set ({', '.join(write_set)}): {', '.join(outside)}")
    touched = [path for path in paths if any(_glob_match(path, glob) for glob in forbidden)]
    if touched:
        problems.append(f"changed forbidden paths ({', '.join(forbidden)}): {', '.join(touched)}")
    return problems


def _within(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root)


def _normalized(path: PurePosixPath) -> PurePosixPath:
    """``path`` with ``a/..`` folded away, keeping a leading ``..`` that climbs past its top."""
    parts: list[str] = []
    for part in path.parts:
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _glob_match(path: str, glob: str) -> bool:
    """``src/**`` holds every path under src/; ``*.py`` a top-level file; other globs match fnmatch's way."""
    if glob.endswith("/**"):
        return path == glob[:-3] or path.startswith(glob[:-2])
    return fnmatch.fnmatchcase(path, glob)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
