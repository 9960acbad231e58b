"""graph.json as the page reads it: the compact payload with its left-out fields put back, as
static/js/dag/model.js's ``payloadExpanded`` does."""

from __future__ import annotations

from typing import Any


def graph_expanded(payload: dict[str, Any]) -> dict[str, Any]:
    defaults = payload["defaults"]
    expanded = {key: value for key, value in payload.items() if key != "defaults"}
    expanded["run"] = {**defaults["run"], **payload["run"]}
    expanded["nodes"] = [{**defaults["node"], "label": node["node_id"], **node} for node in payload["nodes"]]
    expanded["edges"] = [{**defaults["edge"], **edge} for edge in payload["edges"]]
    expanded["attempts"] = [{**defaults["attempt"], **attempt} for attempt in payload["attempts"]]
    return expanded


def graph_json(client, run) -> dict[str, Any]:
    """The run's graph.json as ``client`` gets it, expanded."""
    response = client.get(f"/runs/{run.run_id}/graph.json")
    assert response.status_code == 200
    return graph_expanded(response.json())
