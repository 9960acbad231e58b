"""graph.json as it is sent: the graph (``graphs.reads.graph``) without the fields that hold their
default, and the tag that names what it shows, so a browser that has it already is answered 304.

Compact: a node, edge, attempt or the run leaves out each field equal to its default in ``DEFAULTS``
(sent once, as the payload's ``defaults``), and a node its ``label`` when that is its ``node_id``; the
page puts them back (static/js/dag/model.js, ``payloadExpanded``). A field whose value is not its
default is always sent, a null too (an attempt's unknown ``tokens``).

The tag is read from the database in two aggregate queries, without building the graph: whatever the
payload shows of an attempt is counted or summed in it, and the run's own fields and its layouts'
rows are in it too, so any change the page would draw gives another tag.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.db.models import Count, Max, Q, Sum

from graphs.agents.base import TOKEN_FIELDS
from graphs.models import RunLayout, WorkGraphRun, WorkNodeExecution
from graphs.runs.vocabulary import NOT_STARTED

# Part of the tag: bumped when the payload's shape changes, so no browser keeps a body of the old shape.
PAYLOAD_FORMAT = 4

DEFAULTS: dict[str, dict[str, Any]] = {
    "run": {"error": "", "error_code": "", "max_cost_usd": None},
    "node": {
        "org_node": "", "kind": "generic", "artifact_type": None, "node_type": None, "judgment_kind": "none",
        "on_fail_action": None, "status": NOT_STARTED, "attempts": 0, "latest_exec_id": None,
        "duration_ms": None, "depends_on": [], "cost_usd": None, "failure_role": None,
    },
    "edge": {"edge_type": "needs_judgment", "fired": 0},
    "attempt": {
        "attempt": 1, "cause": "initial", "cause_node_id": "", "started_at": None, "finished_at": None,
        "agent_calls": 0, "cost_usd": None, "tokens": 0, "calls_without_usage": 0, "calls_without_cost": 0,
        "tool_failures": None,
    },
}


def graph_compact(graph: dict[str, Any]) -> dict[str, Any]:
    """``graph`` (``run_graph_with_layout``) with every field at its default left out, and ``defaults``."""
    nodes = []
    for node in graph["nodes"]:
        kept = _without_defaults(node, DEFAULTS["node"])
        if kept.get("label") == kept["node_id"]:
            del kept["label"]
        nodes.append(kept)
    return {
        **graph,
        "defaults": DEFAULTS,
        "run": _without_defaults(graph["run"], DEFAULTS["run"]),
        "nodes": nodes,
        "edges": [_without_defaults(edge, DEFAULTS["edge"]) for edge in graph["edges"]],
        "attempts": [_without_defaults(attempt, DEFAULTS["attempt"]) for attempt in graph["attempts"]],
    }


def _without_defaults(record: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value for key, value in record.items()
        # None is only the default where the default is None: an unknown token count (null) is not 0.
        if key not in defaults or not (value is None if defaults[key] is None else value == defaults[key])
    }


def run_graph_etag(run: WorkGraphRun, *, whole: bool = False) -> str:
    """The tag of the run's graph.json (``whole``: of every node's record, asked for apart): another one
    whenever anything the payload shows has changed.

    An attempt's status only moves forward (pending, queued, running, then an end), so the count of
    attempts in each status changes with every status change since the last visit, however many;
    its times are set once, and what its calls used and cost only grows.
    """
    counted = WorkNodeExecution.objects.filter(run=run).aggregate(
        rows=Count("pk"), created=Max("created_at"),
        started=Count("started_at"), last_started=Max("started_at"),
        finished=Count("finished_at"), last_finished=Max("finished_at"),
        calls=Sum("agent_calls"), cost=Sum("cost_usd"),
        without_usage=Sum("calls_without_usage"), without_cost=Sum("calls_without_cost"),
        tool_failures=Sum("tool_failures"),
        **{f"tokens_{name}": Sum(name) for name in TOKEN_FIELDS},
        **{f"status_{status}": Count("pk", filter=Q(status=status)) for status in WorkNodeExecution.Status.values},
    )
    layouts = RunLayout.objects.filter(run=run).aggregate(rows=Count("pk"), changed=Max("updated_at"))
    shown = (
        PAYLOAD_FORMAT, whole, settings.WORKGRAPH_SERVER_LAYOUT, str(run.pk), run.status, run.manifest_version,
        run.error, run.error_code, str(run.max_cost_usd), sorted(counted.items()), sorted(layouts.items()),
    )
    return '"' + hashlib.sha256(repr(shown).encode()).hexdigest()[:32] + '"'
