"""What an attempt changed, as the API's execution detail carries it, and the part of a diff a page shows."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from graphs.models import AttemptChange, RunWorkspace, WorkNodeExecution


def diff_page(change: RunWorkspace | AttemptChange | None) -> dict[str, Any] | None:
    """What of a change's diff a page shows (up to WORKGRAPH_DIFF_PAGE_BYTES), and whether it is cut;
    None when there is no diff."""
    if change is None or not change.diff:
        return None
    shown = change.diff[:settings.WORKGRAPH_DIFF_PAGE_BYTES]
    return {"text": shown, "cut": len(shown.encode()) < change.diff_bytes, "bytes": change.diff_bytes}


def attempt_change(execution: WorkNodeExecution) -> dict[str, Any] | None:
    """The attempt's change: its commits, each file with its added and removed lines, their totals, and
    its diff up to the page limit (the patch download has all of it). None for an attempt that kept no
    change record (a planning call, a project folder that is not a repository, an attempt not yet done)."""
    change = AttemptChange.objects.filter(node_exec=execution).first()
    if change is None:
        return None
    files = [{"path": str(entry.get("path", "")), "added": int(entry.get("added") or 0),
              "removed": int(entry.get("removed") or 0), "binary": bool(entry.get("binary"))}
             for entry in change.files or [] if isinstance(entry, dict)]
    page = diff_page(change)
    return {
        "base_commit": change.base_commit,
        "result_commit": change.result_commit,
        "merge_commit": change.merge_commit,
        "files": files,
        "lines_added": sum(entry["added"] for entry in files),
        "lines_removed": sum(entry["removed"] for entry in files),
        "diff": page["text"] if page else "",
        "diff_cut": page["cut"] if page else False,
        "diff_bytes": change.diff_bytes,
        "patch_url": f"/executions/{execution.pk}/changes.patch",
    }
