"""What becomes of an attempt's change in its worktree: judged against the rules every attempt keeps,
landed on the run's branch when its judgment passed (or kept on a ref of its own for a reviewer, when its
project requires change review), kept on a ref of its own when it failed — and never committed at all
when the attempt tampered with the worktree's git plumbing."""

from __future__ import annotations

from graphs.domain.judgments import Judgment
from graphs.logs.store import log_append
from graphs.models import WorkNodeExecution
from graphs.workspaces.landings import lost_landing_recover
from graphs.workspaces.worktree_checks import (
    escaping_symlinks,
    git_dir_links_read,
    workspace_tampering,
    write_set_violations,
)
from graphs.workspaces.worktrees import (
    AttemptWorkspace,
    MergeConflictError,
    amended_change,
    workspace_changed_paths,
    workspace_keep,
    workspace_land,
)


def workspace_judgment(workspace: AttemptWorkspace | None, node: dict) -> Judgment | None:
    """A failed judgment when the attempt changed paths its node may not, or added a symlink out of its
    worktree; None when it kept to them."""
    if workspace is None:
        return None
    changed = workspace_changed_paths(workspace)
    problems = write_set_violations(node, changed) if node.get("write_set") or node.get("forbidden_paths") else []
    escaping = escaping_symlinks(workspace.path, changed)
    if escaping:
        problems.append(f"added symlinks that point outside the worktree: {', '.join(escaping)}")
    return Judgment(ok=False, kind="write_set", issues=problems) if problems else None


class ChangeKeeper:
    """Keeps a failed attempt's change on its own ref — unless the attempt tampered with its worktree's
    git plumbing, when nothing of it is committed. Reads that plumbing as the console made it first."""

    def __init__(self, workspace: AttemptWorkspace | None, execution: WorkNodeExecution) -> None:
        self.workspace, self.execution = workspace, execution
        self.links = git_dir_links_read(workspace) if workspace is not None else {}

    def tampered(self) -> Judgment | None:
        """A failed ``workspace_tampered`` judgment naming what changed; None when nothing did."""
        if self.workspace is None:
            return None
        problems = workspace_tampering(self.workspace, git_dir_links=self.links)
        return Judgment(ok=False, kind="workspace_tampered", issues=problems) if problems else None

    def __call__(self) -> None:
        tampered = self.tampered()
        if tampered is not None:
            log_append(execution=self.execution, event="change_not_kept", issues=tampered.issues)
            return
        _change_keep(self.workspace, self.execution)


def change_land(workspace: AttemptWorkspace, execution: WorkNodeExecution, judgment: Judgment) -> Judgment:
    """Merge a judged-good change into the run's branch; a conflict fails the judgment, naming the files.
    Where an earlier attempt of the node landed its change and its worker died before recording it, that
    landing stands (recorded now) and this attempt's change is kept on its ref: a node lands once."""
    landed = lost_landing_recover(workspace, execution)
    if landed is not None:
        kept = workspace_keep(workspace, execution)
        log_append(execution=execution, event="change_landed_before", attempt=landed.node_exec.attempt,
                   commit=landed.result_commit, merge=landed.merge_commit, ref=kept.ref)
        return judgment
    try:
        change = workspace_land(workspace, execution)
    except MergeConflictError as conflict:
        kept = workspace_keep(workspace, execution)
        log_append(execution=execution, event="merge_conflict", files=conflict.files, ref=kept.ref)
        return Judgment(ok=False, kind="merge_conflict", issues=[str(conflict)], detail={"files": conflict.files})
    log_append(execution=execution, event="change_landed", commit=change.result_commit, merge=change.merge_commit,
               files=len(change.files))
    return judgment


def change_review_hold(workspace: AttemptWorkspace, execution: WorkNodeExecution) -> bool:
    """Keep a judged-good change on its own ref for a reviewer instead of landing it, when its project
    requires change review and the attempt changed files (or amends a reviewed change); return whether it
    waits so. A change that changed nothing has nothing to review, and lands as before."""
    if not execution.run.task.project.require_change_review:
        return False
    if amended_change(execution) is None and not workspace_changed_paths(workspace):
        return False
    kept = workspace_keep(workspace, execution)
    if not kept.result_commit:
        return False
    log_append(execution=execution, event="change_awaits_review", commit=kept.result_commit, ref=kept.ref,
               files=len(kept.files))
    return True


def _change_keep(workspace: AttemptWorkspace | None, execution: WorkNodeExecution) -> None:
    """Keep a failed attempt's change on its own ref, for a reviewer to look at; never merged."""
    if workspace is None:
        return
    kept = workspace_keep(workspace, execution)
    if kept.result_commit:
        log_append(execution=execution, event="change_kept", commit=kept.result_commit, ref=kept.ref,
                   files=len(kept.files))
