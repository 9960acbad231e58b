"""A landing whose attempt was lost before it was recorded a success: found, recorded, never landed again.

An attempt lands its change in steps no transaction spans: ``git update-ref`` moves the run's branch, the
console records the change (``AttemptChange``), then the attempt's success. A worker killed between the
first and the last leaves the change on the branch and the attempt lost; the reaper fails it and a retry
of the node runs. The retry must not land the node a second time: its landing finds the lost attempt's
change — recorded as merged, or else its commit (``<node_id> attempt <n>``, the subject every attempt's
commit has) on the branch, then recorded — and keeps its own change on its ref instead. The change on the
branch passed its judgment before it landed, as the retry's did.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.db.models import Max

from graphs.models import AttemptChange, WorkNodeExecution
from graphs.workspaces.git import repository_git
from graphs.workspaces.worktrees import AttemptWorkspace, _diff


def lost_landing_recover(workspace: AttemptWorkspace, execution: WorkNodeExecution) -> AttemptChange | None:
    """The landing of an earlier attempt of ``execution``'s node that failed after its change landed (its
    worker died, or lost the database, before the attempt was recorded ``succeeded``), recorded; None when
    there is none. Only the attempts since the node's last success count: a loop-back lands again."""
    rows = WorkNodeExecution.objects.filter(run_id=execution.run_id, node_id=execution.node_id,
                                            attempt__lt=execution.attempt)
    since = rows.filter(status=WorkNodeExecution.Status.SUCCEEDED).aggregate(last=Max("attempt"))["last"] or 0
    failed = rows.filter(attempt__gt=since, status=WorkNodeExecution.Status.FAILED)
    recorded = AttemptChange.objects.filter(node_exec__in=failed).exclude(merge_commit="").first()
    if recorded is not None:
        return recorded
    # A change row is written after the landing: an attempt without one may have landed all the same. The
    # branch is read only then.
    unrecorded = {row.attempt: row for row in failed.filter(change__isnull=True)}
    if not unrecorded:
        return None
    run_workspace = workspace.run_workspace
    top = Path(run_workspace.repository)
    branch = f"refs/heads/{run_workspace.branch}"
    subject = re.compile(rf"{re.escape(execution.node_id)} attempt (\d+)")
    commits = repository_git(top, "log", "--no-merges", "--format=%H %s", f"{run_workspace.base_commit}..{branch}")
    for line in commits.splitlines():
        commit, _, text = line.partition(" ")
        found = subject.fullmatch(text)
        if found and int(found.group(1)) in unrecorded:
            return _landing_record(top, branch, unrecorded[int(found.group(1))], commit,
                                   base=run_workspace.base_commit)
    return None


def _landing_record(top: Path, branch: str, execution: WorkNodeExecution, commit: str, *, base: str) -> AttemptChange:
    parent = repository_git(top, "rev-parse", f"{commit}^1").strip()
    merge = commit
    # The commit of the branch's own line that brought the change in: itself, or the merge whose second
    # parent it is.
    for line in repository_git(top, "log", "--first-parent", "--format=%H %P", f"{base}..{branch}").splitlines():
        head, *parents = line.split()
        if head == commit or commit in parents[1:]:
            merge = head
            break
    files, diff, size = _diff(top, parent, commit)
    change, _ = AttemptChange.objects.update_or_create(
        node_exec=execution,
        defaults={"run_id": execution.run_id, "base_commit": parent, "result_commit": commit, "merge_commit": merge,
                  "files": files, "diff": diff, "diff_bytes": size},
    )
    return change
