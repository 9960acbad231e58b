"""The run graph's side panel for one node, as the server renders it: the node's latest attempt with
every fact the panel shows, or why there is none (the node has not started, the run ended before it,
the run has no such node)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphs.models import PLANNING_NODE_ID, WorkGraphRun
from graphs.reads.executions import execution_detail
from graphs.runs.facts import node_latest_attempt


@dataclass(frozen=True)
class NodePanel:
    """What the panel shows for ``node_id``: ``state`` is the latest attempt's status, ``not-started`` or
    ``missing``; ``detail`` the attempt as ``execution_detail`` reads it (None without one); ``words``
    the sentence shown instead of an attempt."""

    node_id: str
    state: str
    detail: dict[str, Any] | None = None
    words: str = ""


def node_panel_read(*, run: WorkGraphRun, node_id: str) -> NodePanel:
    """The panel of ``node_id`` in ``run`` (two queries with an attempt, one without)."""
    latest = node_latest_attempt(run=run, node_id=node_id)
    if latest is not None:
        return NodePanel(node_id=node_id, state=latest.status, detail=execution_detail(latest))
    planned = any(spec.get("node_id") == node_id for spec in (run.graph_manifest or {}).get("nodes", []))
    if not planned or node_id.startswith(PLANNING_NODE_ID):
        return NodePanel(node_id=node_id, state="missing", words="This run has no such node.")
    if run.is_finished():
        return NodePanel(node_id=node_id, state="not-started", words="This node did not run: the run ended before it.")
    return NodePanel(node_id=node_id, state="not-started", words="This node has not started yet.")
