"""The API's shape of what an attempt changed (``ExecutionDetailOut.changes``)."""

from __future__ import annotations

from ninja import Field, Schema


class ChangedFileOut(Schema):
    path: str
    added: int = Field(..., description="Lines added (0 for a binary file).")
    removed: int = Field(..., description="Lines removed (0 for a binary file).")
    binary: bool


class AttemptChangeOut(Schema):
    base_commit: str = Field(..., description="The commit the attempt's worktree started from.")
    result_commit: str = Field(..., description="The commit of its change; empty when it changed nothing.")
    merge_commit: str = Field(..., description="Where the change landed on the run's branch; empty when it did not.")
    files: list[ChangedFileOut]
    lines_added: int
    lines_removed: int
    diff: str = Field(..., description="The unified diff, up to WORKGRAPH_DIFF_PAGE_BYTES (what the node page shows).")
    diff_cut: bool = Field(..., description="True when the diff is longer than what is carried here.")
    diff_bytes: int = Field(..., description="The whole diff's size; patch_url serves all of it that is stored.")
    patch_url: str
