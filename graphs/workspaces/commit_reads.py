"""What a change review reads of a project's repository: a file as a commit holds it, and the diff between
two commits (an attempt's reviewed result and the result of the attempt that amended it).

Read through the console's own git (graphs.workspaces.git), never through a worktree an agent wrote in.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from graphs.workspaces.git import WorkspaceError, commits_patch, repository_git, repository_git_run


def commit_file_lines(repository: str | Path, commit: str, path: str) -> list[str] | None:
    """The lines of ``path`` as ``commit`` holds it (its first line is the list's first item); None when the
    commit holds no such file, or holds it as binary data, or the repository is gone."""
    top = Path(repository)
    if not commit or not top.is_dir():
        return None
    done = repository_git_run(top, "cat-file", "-e", f"{commit}:{path}")
    if done.returncode != 0:
        return None
    try:
        data = repository_git(top, "cat-file", "blob", f"{commit}:{path}", raw=True)
    except WorkspaceError:
        return None
    if b"\0" in data[:8000]:
        return None  # what git itself takes for binary: it has no lines to comment on
    return data.decode("utf-8", errors="replace").splitlines()


def commits_diff(repository: str | Path, old: str, new: str) -> tuple[str, int] | None:
    """The unified diff from ``old`` to ``new`` (cut at WORKGRAPH_DIFF_PAGE_BYTES) and its whole size in
    bytes; None when the repository no longer holds both commits."""
    top = Path(repository)
    if not (old and new) or not top.is_dir():
        return None
    try:
        patch = commits_patch(top, old, new)
    except WorkspaceError:
        return None
    shown = patch[: settings.WORKGRAPH_DIFF_PAGE_BYTES]
    return shown.decode("utf-8", errors="replace"), len(patch)
