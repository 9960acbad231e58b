"""What a project's folder is, checked as a lead enters it: there and readable, the top of a git
repository or not, and the commit its base ref names; and what any text field a form saves must be
(``text_field_problem``).

Git runs through the console's own wrapper (``graphs.workspaces.git``): pinned to the folder's git
directory, without the machine's or the user's configuration, so checking a folder runs none of its
hooks or drivers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.workspaces.git import git_command, git_dir_of, toplevel_of

FOLDER_MAX_CHARS = 1000
BASE_REF_MAX_CHARS = 200
NOT_A_REPOSITORY = ("Not the top of a git repository: agents work in the folder itself, so their changes are"
                    " neither isolated on a run branch nor recorded.")


@dataclass(frozen=True)
class FolderCheck:
    """The answer for one folder and base ref. ``problems`` maps a field (``target_folder``, ``base_ref``)
    to what is wrong with it; a check without problems may be saved. ``commit`` is what ``base_ref`` (or
    HEAD, when it is empty) names in a repository."""

    folder: str
    base_ref: str
    exists: bool = False
    readable: bool = False
    repository: bool = False
    commit: str | None = None
    problems: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "base_ref": self.base_ref, "ok": self.ok, "exists": self.exists,
                "readable": self.readable, "repository": self.repository, "commit": self.commit,
                "problems": dict(self.problems), "notes": list(self.notes)}


def folder_check(*, folder: str, base_ref: str = "") -> FolderCheck:
    """Check ``folder`` (an absolute path) and, where it is a repository's top, ``base_ref`` in it."""
    problem = _text_problem(folder, "folder", FOLDER_MAX_CHARS) or _folder_problem(folder)
    ref_problem = _text_problem(base_ref, "base ref", BASE_REF_MAX_CHARS) or _ref_problem(base_ref)
    problems = {"base_ref": ref_problem} if ref_problem else {}
    if problem:
        return FolderCheck(folder=folder, base_ref=base_ref, problems={"target_folder": problem, **problems})
    path = Path(folder)
    exists = path.is_dir()
    readable = exists and os.access(path, os.R_OK | os.X_OK)
    if not exists:
        problem = f"{folder} is a file, not a folder." if path.exists() else f"There is no folder at {folder}."
    elif not readable:
        problem = f"The console cannot read {folder}: give its user read access."
    if problem:
        return FolderCheck(folder=folder, base_ref=base_ref, exists=exists, problems={"target_folder": problem,
                                                                                       **problems})
    repository = toplevel_of(path) == path.resolve()
    if not repository:
        if base_ref and not ref_problem:
            problems["base_ref"] = "A base ref needs a git repository: leave it empty for this folder."
        return FolderCheck(folder=folder, base_ref=base_ref, exists=True, readable=True, problems=problems,
                           notes=[NOT_A_REPOSITORY])
    commit = None if ref_problem else _commit_of(path, base_ref or "HEAD")
    if commit is None and not ref_problem:
        problems["base_ref"] = (f"{base_ref} names no commit in this repository." if base_ref else
                                "The repository has no commit yet: commit once, or name a ref.")
    start = f", from {base_ref or 'HEAD'} ({commit[:12]})" if commit else ""
    notes = [f"A git repository: each run works on a branch of its own, each attempt in a worktree{start}."]
    return FolderCheck(folder=folder, base_ref=base_ref, exists=True, readable=True, repository=True,
                       commit=commit, problems=problems, notes=notes)


def _text_problem(value: str, label: str, limit: int) -> str | None:
    if "\x00" in value:
        return f"The {label} must not contain NUL characters."
    if not value.isascii() and not text_encodable(value):
        return f"The {label} must be valid text (a lone surrogate is not)."
    if len(value) > limit:
        return f"The {label} must be at most {limit:,} characters (it has {len(value):,})."
    return None


def text_field_problem(value: Any, limit: int) -> str | None:
    """What is wrong with ``value`` as a text field of at most ``limit`` characters, in the words a form shows
    beside it; None when it may be saved."""
    if not isinstance(value, str):
        return "Must be text."
    if "\x00" in value:
        return "Must not contain NUL characters."
    if not text_encodable(value):
        return "Must be valid text (a lone surrogate is not)."
    if len(value) > limit:
        return f"At most {limit:,} characters (this has {len(value):,})."
    return None


def text_encodable(value: str) -> bool:
    """False for text that cannot be written as UTF-8 (a lone surrogate): no path, and no database, takes it."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _folder_problem(folder: str) -> str | None:
    if not folder.strip():
        return "Name the folder agents work in."
    if not os.path.isabs(folder):
        return "Give the folder's absolute path (it starts with /)."
    return None


def _ref_problem(base_ref: str) -> str | None:
    # A ref is handed to git as an argument: one starting with "-" would be read as an option.
    if base_ref.startswith("-") or any(char.isspace() or ord(char) < 32 for char in base_ref):
        return "A base ref is a branch, tag or commit: no spaces or control characters, not starting with '-'."
    return None


def _commit_of(top: Path, revision: str) -> str | None:
    git_dir = git_dir_of(top)
    done = git_command(("rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"),
                       git_dir=git_dir, work_tree=top, cwd=top)
    return (done.stdout.decode(errors="replace").strip() or None) if done.returncode == 0 else None
