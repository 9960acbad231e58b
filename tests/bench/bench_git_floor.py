"""The least git can take to land an attempt's change: its git commands alone, told which file changed.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    .venv/bin/python -m pytest tests/bench/bench_git_floor.py -s -p no:cacheprovider -o python_files='bench_*.py'

On the repositories of ``bench_workspaces`` (``repository_make``: 1,000 and 10,000 files, and 100,000
with ``BENCH_WORKSPACES_100K``), one worktree of the pool held for every round, as a chain's worktree is
handed from node to node. A round appends a few lines to one file, then sends only the git commands a
landing cannot do without, through the console's own git wrapper (its pinned configuration and the
worktree's index settings): ``git add`` of that one file, ``write-tree``, reading the head, ``commit-tree``,
moving the worktree's ``HEAD``, reading and moving the branch, and the two diffs a landing records (the
attempt's and the run's, by the console's own ``_diff``). Nothing looks for what else changed and
nothing is cleaned: this is what a workspace that learned an agent's changes without walking the tree
(a filesystem watcher) would still pay with git's own programs, each started afresh and each reading
the worktree's whole index.

The same floor in-process (``libgit2``): the worktree's repository and index opened once for the held
worktree (as ``graphs.workspaces.libgit`` keeps them for an attempt), then per round libgit2 stages that
one file, writes the tree, commits and moves ``HEAD``, reads the branch and moves it under its ref lock;
the two diffs stay the console's ``_diff``, as in the product. And the product's own staging beside it
(``staged``: libgit2's ``add --all``, which looks at every file's stat, and the changed paths).

Compare it with ``bench_workspaces``' chain of nodes, whose "not a repository" row is what a node costs
with no workspace at all.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import pytest

from graphs.workspaces import worktrees as workspaces
from graphs.workspaces.git import repository_git
from graphs.workspaces.libgit import (
    _opened,
    _ref_move,
    _signature,
    folder_touched,
    ref_commit,
    ref_move,
    staged,
    staged_commit,
)
from graphs.workspaces.pool import worktree_git, worktree_held
from tests.bench.bench_workspaces import ROUNDS, SIZES, _change_make, projects, workspace_dir  # noqa: F401
from tests.bench.report import load_average, ms, p95, tables

pytestmark = pytest.mark.django_db

BRANCH = "refs/heads/bench-git-floor"


def _landing_git(top: Path, worktree, path: str, base: str) -> str:
    """An attempt's change to ``path`` committed and moved onto the branch, with both diffs read: the
    commit."""
    worktree_git(worktree, "add", "--all", "--", path)
    tree = worktree_git(worktree, "write-tree").strip()
    head = worktree_git(worktree, "rev-parse", "HEAD^{commit}").strip()
    commit = worktree_git(worktree, "commit-tree", "--no-gpg-sign", tree, "-p", head, "-m", "floor").strip()
    worktree_git(worktree, "update-ref", "--no-deref", "HEAD", commit, head)
    branch_head = repository_git(top, "rev-parse", BRANCH).strip()
    repository_git(top, "update-ref", BRANCH, commit, branch_head)
    workspaces._diff(top, head, commit)
    workspaces._diff(top, base, commit)
    return commit


def _landing_libgit2(top: Path, worktree, path: str, base: str) -> str:
    """The same landing in-process, the worktree's index read once for the hold."""
    if worktree.state.native is None:
        worktree.state.native = _opened(worktree)
    repository, index = worktree.state.native
    index.add(path)
    tree = index.write_tree(repository)
    index.write()
    head = str(repository.head.target)
    identity = _signature()
    commit = str(repository.create_commit(None, identity, identity, "floor\n", tree, [head]))
    _ref_move(repository, "HEAD", commit, head, identity)
    assert ref_move(top, BRANCH, commit, ref_commit(top, BRANCH))
    workspaces._diff(top, head, commit)
    workspaces._diff(top, base, commit)
    return commit


def _landing_staged(top: Path, worktree, path: str, base: str) -> str:
    """The product's in-process landing: every file's stat looked at to find the change (the round's write
    is an agent's, after which the product stages afresh)."""
    folder_touched(worktree.path)
    change = staged(worktree)
    assert change is not None and change.paths == [path]
    commit = staged_commit(change, "floor")
    assert ref_move(top, BRANCH, commit, ref_commit(top, BRANCH))
    workspaces._diff(top, change.head, commit)
    workspaces._diff(top, base, commit)
    return commit


LANDINGS = {"git CLI, told the file": _landing_git, "libgit2, told the file": _landing_libgit2,
            "libgit2, add --all": _landing_staged}


def test_the_git_commands_a_landing_cannot_do_without(projects, workspace_dir, settings):  # noqa: F811
    settings.WORKGRAPH_GIT_BACKEND = "auto"
    rows = []
    load_before = load_average()
    for files in SIZES:
        project = projects[f"git, {files:,} files"]
        for landing_name, landing in LANDINGS.items():
            base = repository_git(project.folder, "rev-parse", "HEAD").strip()
            repository_git(project.folder, "update-ref", BRANCH, base)
            with worktree_held(project.folder, base, root=workspace_dir, size=1,
                               spare=workspace_dir / "spare") as worktree:
                times = []
                for round_ in range(ROUNDS + 1):
                    path = project.paths[(7 * round_) % len(project.paths)]
                    _change_make(worktree.path, path, f"floor{round_}")
                    started = time.perf_counter()
                    landing(project.folder, worktree, path, base)
                    if round_:
                        times.append(time.perf_counter() - started)
                assert not worktree_git(worktree, "status", "--porcelain", "--untracked-files=no")
            rows.append([project.name, landing_name, str(len(times)), ms(statistics.median(times)), ms(p95(times))])
    print(f"\n\nThe git steps of a landing alone, ms ({os.cpu_count()} cores; load average {load_before}"
          f" before, {load_average()} after)\n{tables(['repository', 'landing', 'attempts', 'p50', 'p95'], rows)}\n")
