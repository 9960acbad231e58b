"""Git as the console runs it: pinned to the repository and work tree it means, obeying only itself.

An agent writes the files of its worktree, and may write anything there: a ``.git`` that points at
another repository, a repository of its own whose configuration runs a program, a ``.gitattributes``
naming a filter. So every git command the console runs

- names its git directory and work tree (``GIT_DIR``, ``GIT_WORK_TREE``): git never looks for them in
  a folder an agent wrote, and ``GIT_CEILING_DIRECTORIES`` stops a search above the project's folder;
- runs with an environment built from nothing (no inherited ``GIT_*`` variable), without the machine's
  and the user's configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``);
- turns off, on its command line (which outranks every configuration file), each setting that runs a
  program or reads a file outside the repository: ``SAFE_CONFIG`` below, and every filter, diff and
  merge driver the repository's own configuration defines (``driver_overrides``).

``repository_git`` runs git on a project's repository that way; ``repository_locked`` holds the lock
file under which its worktrees are added and removed, and its run branches made, one at a time.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from graphs.errors import WorkGraphError

COMMITTER = {"name": "Work Graph Console", "email": "workgraph@localhost"}
# git diff as the console reads a change: git's own diff, no driver, converter or external program of the
# repository's.
DIFF_ARGS = ("diff", "--no-color", "--no-renames", "--no-ext-diff", "--no-textconv")
# In the repository's git directory: held while a run's branch is made and a worktree added, removed
# or pruned.
REPOSITORY_LOCK_NAME = "workgraph.lock"
# git-config(1) settings that name a program or a file outside the repository, and what the console
# runs with instead. Hooks, the file-system monitor, pagers, editors, credential helpers, signing, external
# diffs and every transport but local files are off; submodules are never entered.
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", ""),
    ("core.attributesFile", "/dev/null"),
    ("core.excludesFile", "/dev/null"),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gpg.program", "false"),
    ("protocol.allow", "never"),
    ("protocol.file.allow", "always"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("maintenance.auto", "false"),
    ("gc.auto", "0"),
)
# The driver settings of gitattributes(5) that run a program, by section, and what each becomes for
# every driver the repository's configuration defines: an empty filter or diff command is no command
# (the content passes as it is); a merge driver that always fails leaves its file a conflict to resolve.
DRIVER_KEYS = {
    "filter": (("clean", ""), ("smudge", ""), ("process", "")),
    "diff": (("command", ""), ("textconv", "")),
    "merge": (("driver", "false"),),
}
_DRIVER_SETTING = re.compile(r"^(filter|diff|merge)\.(.+)\.([a-z]+)$")


class WorkspaceError(WorkGraphError):
    """A git command the console ran on a project's repository failed; the message holds what git said."""


def git_env(*, git_dir: Path | None = None, work_tree: Path | None = None,
            ceiling: Path | None = None) -> dict[str, str]:
    """The environment git runs with: what it needs to find programs and speak UTF-8, a fixed identity
    for commits, no configuration but the repository's, no prompt that could hang, and the git
    directory and work tree pinned where they are given."""
    name, email = COMMITTER["name"], COMMITTER["email"]
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL") if key in os.environ}
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
    })
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    return env


def safe_config_argv(git_dir: Path | None = None) -> list[str]:
    """``-c`` options for ``SAFE_CONFIG`` and for the drivers the configuration in ``git_dir`` defines."""
    argv = [arg for key, value in SAFE_CONFIG for arg in ("-c", f"{key}={value}")]
    if git_dir is not None:
        argv += [arg for setting in driver_overrides(git_dir) for arg in ("-c", setting)]
    return argv


@lru_cache(maxsize=256)
def driver_overrides(git_dir: Path) -> tuple[str, ...]:
    """``key=value`` settings that keep every filter, diff and merge driver of the repository at ``git_dir``
    from running a program. Read once per process: no agent reaches a repository's configuration from
    its sandbox."""
    done = subprocess.run(
        ["git", *[arg for key, value in SAFE_CONFIG for arg in ("-c", f"{key}={value}")],
         "config", "--name-only", "--get-regexp", r"^(filter|diff|merge)\."],
        capture_output=True, text=True, env=git_env(git_dir=git_dir), check=False,
    )
    drivers: set[tuple[str, str]] = set()
    for line in done.stdout.splitlines():
        found = _DRIVER_SETTING.match(line.strip())
        if found:
            drivers.add((found.group(1), found.group(2)))
    return tuple(sorted(f"{section}.{driver}.{key}={value}" for section, driver in drivers
                        for key, value in DRIVER_KEYS[section]))


def git_command(args: tuple[str, ...] | list[str], *, git_dir: Path, work_tree: Path | None, cwd: Path,
                config_dir: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` on the repository at ``git_dir`` (and ``work_tree``, where the command has one);
    ``config_dir`` is the git directory holding its configuration, where that is another (a linked
    worktree's shared one)."""
    return subprocess.run(
        ["git", *safe_config_argv(config_dir or git_dir), *args], cwd=cwd, capture_output=True,
        env=git_env(git_dir=git_dir, work_tree=work_tree), check=False,
    )


def toplevel_of(folder: Path) -> Path | None:
    """The top of the git repository ``folder`` lies in, searching no higher than its parent; None
    when it lies in none."""
    done = subprocess.run(
        ["git", *safe_config_argv(), "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True,
        env=git_env(ceiling=folder.parent), check=False,
    )
    return Path(done.stdout.strip()).resolve() if done.returncode == 0 else None


def git_dir_of(top: Path) -> Path:
    """The git directory of the repository whose top is ``top`` (``.git``, or where a ``.git`` file of
    the project's own points)."""
    done = subprocess.run(
        ["git", *safe_config_argv(), "rev-parse", "--absolute-git-dir"], cwd=top, capture_output=True, text=True,
        env=git_env(ceiling=top.parent), check=False,
    )
    return Path(done.stdout.strip())


@contextmanager
def repository_locked(top: Path, name: str = REPOSITORY_LOCK_NAME) -> Iterator[None]:
    """Hold the repository's lock (or the one called ``name`` in its git directory) for the block, waiting
    for any thread or process holding it.

    Adding or removing a worktree reads the administrative files of every other worktree of the
    repository; run beside another add or removal, git (2.39) reads them half-written and fails ("failed
    to read .git/worktrees/<name>/commondir"). Two attempts making their run's branch at once would
    otherwise meet on its ref lock, and the loser's error would depend on when it met it. ``flock``
    locks belong to an open file, so the threads of one worker exclude each other as processes do.
    """
    path = repository_git_dir(top) / name
    try:
        lock_file = open(path, "a")  # closing it gives the lock back
    except OSError as error:
        raise WorkspaceError(f"could not open the repository's lock file {path}: {error.strerror}") from error
    with lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        yield


def branch_landing_locked(top: Path, branch: str) -> AbstractContextManager[None]:
    """Hold the turn to land on the console's ``branch``, waiting for any thread or process landing there.

    Racing, a landing whose merge is slow (a loaded machine, many landings at once after an outage) could
    lose to the others every time; in turn, each builds on the head it read. The moves stay
    compare-and-swap for a worker on another machine sharing the repository."""
    return repository_locked(top, f"workgraph-landing-{branch.replace('/', '-')}.lock")


@lru_cache(maxsize=256)
def repository_git_dir(top: Path) -> Path:
    """The git directory the repository's worktrees share (``.git`` of a plain clone)."""
    return git_dir_of(top)


def repository_git_run(top: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run git on the repository whose top is ``top``; what it printed, as text."""
    done = git_command(args, git_dir=repository_git_dir(top), work_tree=top, cwd=top)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8", errors="replace"),
                                       done.stderr.decode("utf-8", errors="replace"))


def repository_git(top: Path, *args: str, raw: bool = False) -> Any:
    """Run git on the repository whose top is ``top``; its stdout (bytes when ``raw``), or
    ``WorkspaceError`` with what it said."""
    return git_checked(git_command(args, git_dir=repository_git_dir(top), work_tree=top, cwd=top), args, raw=raw)


def git_checked(done: subprocess.CompletedProcess[bytes], args: tuple[str, ...], *, raw: bool) -> Any:
    if done.returncode != 0:
        raise WorkspaceError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout if raw else done.stdout.decode("utf-8", errors="replace")


def commits_patch(top: Path, old: str, new: str) -> bytes:
    """The unified diff from ``old`` to ``new`` as git's own diff makes it (``DIFF_ARGS``)."""
    return repository_git(top, *DIFF_ARGS, old, new, raw=True)
