"""Git workspaces: each run works on a branch of its own, each attempt in a worktree of its own.

When a project's folder is a git repository, a run gets the branch ``workgraph/run-<short id>`` from
the project's ``base_ref`` (default: the folder's HEAD when the run first needs it). Each attempt works
in a fresh worktree made from the branch's head as it starts, so it sees exactly the merged changes of
the attempts that landed before it. An attempt that succeeds is committed (``<node_id> attempt <n>``, a
fixed identity, hooks skipped) and merged into the branch without a checkout: attempts landing at once
take turns (a lock file per branch), and the branch moves only from the head its merge was built on.
A conflict is ``MergeConflictError`` naming the files. A failed attempt's change is committed to its
own ref, ``refs/workgraph/attempts/<id>``, never merged. Branches and refs stay after their run.

The worktrees are a repository's pool (``graphs.workspaces.pool``, ``WORKGRAPH_WORKTREE_POOL_SIZE`` of
them): an attempt takes a free one and moves it to its head, rewriting only what differs, and gives it
back clean; with every one taken, it gets a worktree of its own, removed when it ends. Worktrees are
added and removed, and run branches made, one at a time, under a lock file every process takes.

A project whose folder is not a git repository has no workspace: its attempts run in the folder
itself, as they always did.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from graphs.models import AttemptChange, RunWorkspace, WorkGraphRun, WorkNodeExecution
from graphs.workspaces import git as console_git
from graphs.workspaces.disk import disk_full_named
from graphs.workspaces.git import WorkspaceError, repository_git, repository_git_run, repository_locked, toplevel_of
from graphs.workspaces.libgit import ref_commit, ref_move, staged, staged_commit
from graphs.workspaces.pool import Worktree, worktree_committed, worktree_git, worktree_held

BRANCH_PREFIX = "workgraph/run-"
ATTEMPT_REF_PREFIX = "refs/workgraph/attempts/"
# How often a landing is built again on a head another attempt moved meanwhile.
_LAND_TRIES = 20


class MergeConflictError(WorkspaceError):
    """An attempt's change conflicts with what landed on the run's branch since it started."""

    def __init__(self, files: list[str]) -> None:
        super().__init__(f"merge conflict in {', '.join(files) or 'the change'}")
        self.files = files


@dataclass(frozen=True)
class AttemptWorkspace:
    """An attempt's own worktree, at the run branch's head (``base_commit``) as it started. ``git_dir``
    is its git directory as git made it, and ``dot_git`` the text of the ``.git`` file that points there:
    the console's own git commands name ``git_dir``, never the ``.git`` the agent could rewrite."""

    run_workspace: RunWorkspace
    worktree: Worktree
    base_commit: str

    @property
    def path(self) -> Path:
        return self.worktree.path

    @property
    def git_dir(self) -> Path:
        return self.worktree.git_dir

    @property
    def dot_git(self) -> str:
        return self.worktree.dot_git

    @property
    def cwd(self) -> Path:
        """Where the attempt's agent works."""
        return self.path


def repository_of(folder: str | Path) -> Path | None:
    """The project folder when it is the top of a git repository, else None.

    Only the top counts: a folder that merely lies inside some repository (a checkout's ``var/``)
    is not the project's own, and its work must not go on branches of another repository.
    """
    return _repository_of(str(Path(folder).resolve()))


@lru_cache(maxsize=256)
def _repository_of(folder: str) -> Path | None:
    # A folder's being a repository is settled once per process: the console does not turn folders
    # into repositories under running work.
    if not Path(folder).is_dir():
        return None
    return Path(folder) if toplevel_of(Path(folder)) == Path(folder) else None


def run_workspace_ensure(run: WorkGraphRun) -> RunWorkspace | None:
    """The run's workspace, made (its branch created) the first time the run needs it; None for a
    project whose folder is not a git repository."""
    project = run.task.project
    repository = repository_of(project.target_folder)
    if repository is None:
        return None
    existing = RunWorkspace.objects.filter(run=run).first()
    if existing is not None:
        return existing
    base = _fork_point(run) if run.forked_from_id else None
    # An experiment's run starts from its case's commit, whatever the project's base has moved to since.
    start = base or run.start_commit or _commit_of(repository, project.base_ref or "HEAD")
    return _run_workspace_create(run, repository, start)


def _run_workspace_create(run: WorkGraphRun, repository: Path, base: str) -> RunWorkspace:
    branch = f"{BRANCH_PREFIX}{run.run_id.hex[:8]}"
    # Two attempts of a new run may both get here: the branch is created once (-f would move it).
    with repository_locked(repository):
        if repository_git_run(repository, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode != 0:
            done = repository_git_run(repository, "branch", branch, base)
            if done.returncode != 0:
                raise WorkspaceError(f"could not create the branch {branch}: {done.stderr.strip()}")
    try:
        with transaction.atomic():
            return RunWorkspace.objects.create(
                run=run, repository=str(repository), branch=branch, base_commit=base, head_commit=base,
            )
    except IntegrityError:
        return RunWorkspace.objects.get(run=run)


def _fork_point(fork: WorkGraphRun) -> str | None:
    """Where a fork's branch starts: the source run's commit just before the forked node's first
    change landed; the source's head when that node never landed one; None when the source run had
    no workspace (the fork then starts from the project's base)."""
    source = RunWorkspace.objects.filter(run_id=fork.forked_from_id).first()
    if source is None:
        return None
    first = (
        AttemptChange.objects.filter(run_id=fork.forked_from_id, node_exec__node_id=fork.fork_node_id)
        .exclude(merge_commit="").order_by("node_exec__finished_at").values_list("merge_commit", flat=True).first()
    )
    if first is None:
        return source.head_commit
    return _commit_of(Path(source.repository), f"{first}^1")


@contextmanager
def attempt_workspace(execution: WorkNodeExecution) -> Iterator[AttemptWorkspace | None]:
    """A worktree of the attempt's own for the time of the block, at the run branch's head; None (and
    nothing done) for a project whose folder is not a git repository. A failure on a full disk is a
    ``DiskFullError``, named before the worktree is given back (which frees space)."""
    folders = (settings.WORKGRAPH_WORKSPACE_DIR, execution.run.task.project.target_folder)
    with disk_full_named(folders):
        run_workspace = run_workspace_ensure(execution.run)
        if run_workspace is None:
            yield None
            return
        top = Path(run_workspace.repository)
        base = _commit_of(top, f"refs/heads/{run_workspace.branch}")
        start = base
        amended = amended_change(execution)
        if amended is not None:
            # An attempt amending a reviewed change works on that change, and its own change is the whole of it.
            base, start = amended
        with _worktree_held(top, start, spare=_worktree_path(execution)) as worktree, disk_full_named(folders):
            yield AttemptWorkspace(run_workspace=run_workspace, worktree=worktree, base_commit=base)


def amended_change(execution: WorkNodeExecution) -> tuple[str, str] | None:
    """For an attempt a change review (or a forge's failing check) asked to amend an earlier attempt's change:
    the commit that change was made on and its result, where this attempt's worktree starts. None for any
    other attempt."""
    payload = execution.input_payload or {}
    # A follow-up run fixing a forge's failing check amends the delivered change the same way.
    review = payload.get("review") or payload.get("forge_check") or {}
    base, result = review.get("base_commit") or "", review.get("result_commit") or ""
    return (base, result) if base and result else None


@contextmanager
def run_head_checkout(run: WorkGraphRun, *, name: str) -> Iterator[Path | None]:
    """A look at the run branch's head (for a planning call): a worktree for the time of the block;
    None for a project that is not a git repository."""
    run_workspace = run_workspace_ensure(run)
    if run_workspace is None:
        yield None
        return
    top = Path(run_workspace.repository)
    spare = Path(settings.WORKGRAPH_WORKSPACE_DIR) / run.run_id.hex[:8] / _safe(name)
    with _worktree_held(top, _commit_of(top, f"refs/heads/{run_workspace.branch}"), spare=spare) as worktree:
        yield worktree.path


def workspace_changed_paths(workspace: AttemptWorkspace) -> list[str]:
    """Every path the attempt added, changed, deleted or renamed (both names), repository-relative."""
    change = staged(workspace.worktree)
    if change is not None:
        return change.paths
    out = _git_in(workspace, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                  "--ignore-submodules=all")
    return sorted({entry[3:] for entry in out.split("\0") if len(entry) > 3})


def workspace_land(workspace: AttemptWorkspace, execution: WorkNodeExecution) -> AttemptChange:
    """Commit the attempt's change and merge it into the run's branch; record and return the change.

    Raises ``MergeConflictError`` (the change is then kept as a failed attempt's is).
    """
    result = _commit(workspace, execution)
    # Nothing runs in the worktree after its landing's commit: it is that commit, bar what git ignores.
    worktree_committed(workspace.worktree, result or workspace.base_commit)
    merge = _branch_land(workspace.run_workspace, base=workspace.base_commit, result=result,
                         execution=execution) if result else ""
    return _change_record(workspace, execution, result=result, merge=merge)


def kept_change_land(execution: WorkNodeExecution) -> AttemptChange:
    """Merge the change an attempt kept on its ref (one that waited for a reviewer) into the run's branch;
    record and return the change. Raises ``MergeConflictError`` when what landed since conflicts with it."""
    change = AttemptChange.objects.select_related("run__workspace").get(node_exec=execution)
    if not change.result_commit or change.merge_commit:
        return change
    change.merge_commit = _branch_land(change.run.workspace, base=change.base_commit, result=change.result_commit,
                                       execution=execution)
    AttemptChange.objects.filter(pk=change.pk).update(merge_commit=change.merge_commit)
    return change


def _branch_land(run_workspace: RunWorkspace, *, base: str, result: str, execution: WorkNodeExecution) -> str:
    """Move the run's branch to ``result`` (made on ``base``), merged with what landed since; return the
    branch's new head."""
    top = Path(run_workspace.repository)
    branch_ref = f"refs/heads/{run_workspace.branch}"
    with console_git.branch_landing_locked(top, run_workspace.branch):
        for _ in range(_LAND_TRIES):
            head = _commit_of(top, branch_ref)
            merge = result if head == base else _merge_commit(top, head, result, execution)
            if ref_move(top, branch_ref, merge, head):
                break
        else:
            raise WorkspaceError(f"the branch {run_workspace.branch} kept moving; the change did not land")
    _run_diff_record(run_workspace, head=merge)
    return merge


def workspace_keep(workspace: AttemptWorkspace, execution: WorkNodeExecution) -> AttemptChange:
    """Keep a failed attempt's change on its own ref, never merged; record and return it."""
    result = _commit(workspace, execution)
    ref = ""
    if result:
        ref = f"{ATTEMPT_REF_PREFIX}{execution.pk}"
        repository_git(Path(workspace.run_workspace.repository), "update-ref", ref, result)
    return _change_record(workspace, execution, result=result, merge="", ref=ref)


def workspaces_prune(runs: Sequence[WorkGraphRun]) -> int:
    """Delete the branches and attempt refs of ``runs`` (and any worktree left of them); return how
    many branches went. Their recorded changes stay."""
    pruned = 0
    for run_workspace in RunWorkspace.objects.filter(run__in=runs):
        top = Path(run_workspace.repository)
        if not top.is_dir():
            continue
        refs = AttemptChange.objects.filter(run_id=run_workspace.run_id).exclude(ref="").values_list("ref", flat=True)
        for ref in refs:
            repository_git_run(top, "update-ref", "-d", ref)
        with repository_locked(top):
            repository_git_run(top, "worktree", "prune")
        if repository_git_run(top, "branch", "-D", run_workspace.branch).returncode == 0:
            pruned += 1
        shutil.rmtree(Path(settings.WORKGRAPH_WORKSPACE_DIR) / run_workspace.run_id.hex[:8], ignore_errors=True)
    return pruned


def change_diff(repository: str, old: str, new: str, *, stored: str, size: int) -> bytes:
    """A change's whole unified diff: the stored one when it was kept whole, else from git while the
    repository still holds both commits (the stored part when it does not)."""
    if len(stored.encode()) >= size or not (old and new) or not Path(repository).is_dir():
        return stored.encode()
    try:
        return console_git.commits_patch(Path(repository), old, new)
    except WorkspaceError:
        return stored.encode()


def _commit(workspace: AttemptWorkspace, execution: WorkNodeExecution) -> str:
    """Commit everything the attempt changed; return the commit, or "" when it changed nothing (a
    change committed already, as a landing that met a conflict did, is returned again).

    Built from the index alone (``write-tree``, ``commit-tree``): ``git add`` is the one step that looks
    at the worktree, and it reads only the files whose stat changed. Through libgit2 where it stages as
    git does (``graphs.workspaces.libgit``), the same commit in-process."""
    message = f"{execution.node_id} attempt {execution.attempt}"
    change = staged(workspace.worktree)
    if change is not None:
        commit = staged_commit(change, message)
        return commit or ("" if change.head == workspace.base_commit else change.head)
    _git_in(workspace, "add", "--all")
    tree = _git_in(workspace, "write-tree").strip()
    head, head_tree = _git_in(workspace, "rev-parse", "HEAD^{commit}", "HEAD^{tree}").split()
    if tree == head_tree:
        return "" if head == workspace.base_commit else head
    commit = _git_in(workspace, "commit-tree", "--no-gpg-sign", tree, "-p", head, "-m", message).strip()
    _git_in(workspace, "update-ref", "--no-deref", "HEAD", commit, head)
    return commit


def _merge_commit(top: Path, head: str, change: str, execution: WorkNodeExecution) -> str:
    done = repository_git_run(top, "merge-tree", "--write-tree", "--name-only", "--no-messages", head, change)
    if done.returncode == 1:
        # The tree, then the conflicted files, one a line.
        raise MergeConflictError(sorted(set(done.stdout.split("\n")[1:]) - {""}))
    if done.returncode != 0:
        raise WorkspaceError(f"git merge-tree failed: {done.stderr.strip()}")
    tree = done.stdout.split("\n", 1)[0].strip()
    return repository_git(top, "commit-tree", tree, "-p", head, "-p", change, "-m",
                f"Merge {execution.node_id} attempt {execution.attempt}").strip()


def _change_record(workspace: AttemptWorkspace, execution: WorkNodeExecution, *, result: str, merge: str,
                   ref: str = "") -> AttemptChange:
    top = Path(workspace.run_workspace.repository)
    files, diff, size = _diff(top, workspace.base_commit, result) if result else ([], "", 0)
    change, _ = AttemptChange.objects.update_or_create(
        node_exec=execution,
        defaults={"run_id": execution.run_id, "base_commit": workspace.base_commit, "result_commit": result,
                  "merge_commit": merge, "ref": ref, "files": files, "diff": diff, "diff_bytes": size},
    )
    return change


def _run_diff_record(run_workspace: RunWorkspace, *, head: str) -> None:
    """The branch's whole change against its base, as of ``head``; written only while ``head`` is the
    newest (a landing that lost the race to write leaves the newer one)."""
    files, diff, size = _diff(Path(run_workspace.repository), run_workspace.base_commit, head)
    top = Path(run_workspace.repository)
    current = _commit_of(top, f"refs/heads/{run_workspace.branch}")
    if current != head:
        return
    RunWorkspace.objects.filter(pk=run_workspace.pk).update(head_commit=head, files=files, diff=diff, diff_bytes=size)


def _diff(top: Path, old: str, new: str) -> tuple[list[dict[str, Any]], str, int]:
    """The files changed from ``old`` to ``new`` with their line counts, and the unified diff (cut at
    ``WORKGRAPH_DIFF_MAX_BYTES``) with its whole size."""
    # One git run for both: each file's counts, a NUL after each, one more NUL, then the unified diff.
    out = repository_git(top, *console_git.DIFF_ARGS, "--numstat", "-z", "--patch", old, new, raw=True)
    numstat, _, patch = out.partition(b"\0\0")
    files = []
    for entry in numstat.decode("utf-8", errors="replace").split("\0"):
        if not entry.strip():
            continue
        added, removed, path = entry.split("\t", 2)
        binary = added == "-"
        files.append({"path": path, "added": 0 if binary else int(added), "removed": 0 if binary else int(removed),
                      "binary": binary})
    limit = settings.WORKGRAPH_DIFF_MAX_BYTES
    return files, patch[:limit].decode("utf-8", errors="replace"), len(patch)


def _worktree_path(execution: WorkNodeExecution) -> Path:
    root = Path(settings.WORKGRAPH_WORKSPACE_DIR) / execution.run_id.hex[:8]
    return root / f"{_safe(execution.node_id)}-{execution.attempt}-{execution.pk.hex[:8]}"


def _worktree_held(top: Path, revision: str, *, spare: Path) -> AbstractContextManager[Worktree]:
    return worktree_held(top, revision, root=Path(settings.WORKGRAPH_WORKSPACE_DIR),
                         size=settings.WORKGRAPH_WORKTREE_POOL_SIZE, spare=spare)


def _safe(name: str) -> str:
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in name)[:80] or "node"


def _commit_of(top: Path, revision: str) -> str:
    found = ref_commit(top, revision)
    if found:
        return found
    done = repository_git_run(top, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if done.returncode != 0:
        raise WorkspaceError(f"{revision} names no commit in {top}")
    return done.stdout.strip()


def _git_in(workspace: AttemptWorkspace, *args: str) -> str:
    """Run git in the attempt's worktree, on the git directory git made for it."""
    return worktree_git(workspace.worktree, *args)
