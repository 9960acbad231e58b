"""ELK's layout of a run's DAG, computed with Node.js by the browser's own placement code.

The page lays a graph out with elkjs in a Web Worker (static/js/dag/layout.js); on a first visit that
costs seconds, most of it ELK starting cold. ``graphs/layout/dag_layout.mjs`` imports the same modules and the
same elkjs build, so a layout computed here is the drawing the browser would make, and the page can
paint it as it arrives (see ``graphs.layout.run_layouts`` for when it is computed, and where it is kept).

What placement reads of graph.json — ``layout_input`` — names a layout: its digest keys the stored one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LAYOUT_SCRIPT = Path(__file__).resolve().with_name("dag_layout.mjs")
# The page draws a run of more work nodes collapsed into stages and lays out one stage at a time
# (SIZE_GUARD in static/js/dag/run-graph.js): a whole layout of it would never be shown.
MAX_WORK_NODES = 5000
# How much of the script's stderr a failure keeps: the end of a stack trace says what broke.
STDERR_TAIL_CHARS = 2000
# The boxes' sizes and the gaps between them (static/js/dag/theme.js's SIZE, layout-sketch.js's gaps), and
# how "auto" picks a direction (static/js/dag/layout-direction.js), as a number to change with them: part of
# a layout's digest, so a layout stored with other sizes, or flowing the way an earlier rule picked, is made
# again.
LAYOUT_GEOMETRY = 3


class LayoutError(Exception):
    """The layout could not be computed; the message says why, for the row that records it."""


@dataclass(frozen=True)
class LayoutComputed:
    layout: dict[str, Any]
    #: ELK and placement inside Node.js, then the whole call (Node's start and the JSON both ways).
    elk_ms: int
    total_ms: int


def layout_input(graph: Mapping[str, Any], *, direction: str = "auto") -> dict[str, Any]:
    """What the page's placement reads of a graph.json payload (``graph``): each node's id, kind, org
    node and dependencies, and each edge's ends and type, in payload order (order decides placement);
    and the flow ``direction`` asked for ("DOWN", "RIGHT", or "auto": the one the page picks on a
    desktop's stage, REFERENCE_CANVAS in static/js/dag/legibility.js). The direction is part of the
    digest: a layout flowing one way is never served for the other, nor one made with other box sizes
    (``LAYOUT_GEOMETRY``)."""
    return {
        "direction": direction,
        "geometry": LAYOUT_GEOMETRY,
        "nodes": [
            {"node_id": node["node_id"], "kind": node["kind"], "org_node": node.get("org_node") or "",
             "depends_on": list(node.get("depends_on") or [])}
            for node in graph.get("nodes", [])
        ],
        "edges": [
            {"from": edge["from"], "to": edge["to"], "edge_type": edge["edge_type"]} for edge in graph.get("edges", [])
        ],
    }


def layout_digest(drawing: Mapping[str, Any]) -> str:
    """SHA-256 of a ``layout_input``: equal for every payload the page would place the same way."""
    canonical = json.dumps(drawing, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def layout_work_nodes(drawing: Mapping[str, Any]) -> int:
    """How many of the input's nodes are work nodes (the planning row is not laid out by ELK)."""
    return sum(1 for node in drawing["nodes"] if node["kind"] != "planning")


def layout_compute(
    *, drawing: Mapping[str, Any], previous: Mapping[str, Any] | None, node_binary: str, timeout: float,
) -> LayoutComputed:
    """Lay ``drawing`` (a ``layout_input``) out with Node.js, keeping every position of ``previous`` (an
    earlier layout whose nodes are all still in it) as the page's appends do.

    Raises LayoutError, saying why, when Node.js is missing, fails, runs past ``timeout`` seconds or
    answers with something that does not place every node.
    """
    if not node_binary:
        raise LayoutError("Node.js was not found on this server (set WORKGRAPH_NODE_BINARY): "
                          "the page lays the graph out in the browser")
    request = json.dumps({"graph": drawing, "previous": previous}, ensure_ascii=False).encode()
    started = time.perf_counter()
    try:
        # Node needs nothing of the console's environment, which holds its secrets.
        done = subprocess.run(
            [node_binary, str(LAYOUT_SCRIPT)], input=request, capture_output=True, timeout=timeout,
            env={"PATH": os.environ.get("PATH", "")}, cwd=LAYOUT_SCRIPT.parent, check=False,
        )
    except subprocess.TimeoutExpired:
        raise LayoutError(f"the layout took longer than {timeout:g} s and was stopped") from None
    except OSError as error:
        raise LayoutError(f"Node.js could not be started ({node_binary}): {error}") from None
    total_ms = round((time.perf_counter() - started) * 1000)
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip()[-STDERR_TAIL_CHARS:]
        raise LayoutError(f"the layout script exited with code {done.returncode}: {stderr or '(no message)'}")
    try:
        answer = json.loads(done.stdout)
        layout = _layout_checked(answer["layout"], drawing)
        elk_ms = int(answer["ms"])
    except (ValueError, TypeError, KeyError) as error:
        raise LayoutError(f"the layout script's answer is not a layout: {error}") from None
    return LayoutComputed(layout=layout, elk_ms=elk_ms, total_ms=total_ms)


def _layout_checked(layout: Any, drawing: Mapping[str, Any]) -> dict[str, Any]:
    """``layout`` if it has layoutToJSON's shape with finite numbers and places every node of ``drawing``;
    else ValueError or TypeError naming what is wrong. The page draws it as it is, so it is checked here."""
    if not isinstance(layout, dict):
        raise TypeError("expected an object")
    placed = set()
    for entry in layout["pos"]:
        node_id, *box = entry
        if not isinstance(node_id, str) or len(box) != 4 or not all(_finite(value) for value in box):
            raise ValueError(f"a position is not [id, x, y, w, h]: {str(entry)[:80]}")
        placed.add(node_id)
    missing = [node["node_id"] for node in drawing["nodes"] if node["node_id"] not in placed]
    if missing:
        raise ValueError(f"{len(missing)} node(s) not placed, such as {missing[0]!r}")
    for entry in layout["routes"]:
        source, target, points = entry
        if not isinstance(source, str) or not isinstance(target, str) or not all(_finite(v) for v in points):
            raise ValueError("a route is not [from, to, [numbers]]")
    if layout.get("direction") not in ("DOWN", "RIGHT"):
        raise ValueError("the direction must be DOWN or RIGHT")
    for band in layout["bands"]:
        if not all(_finite(band[name]) for name in ("x", "y", "w", "h")) or not isinstance(band["label"], str):
            raise ValueError("a band is not {x, y, w, h, label}")
    if not _finite(layout["planningRight"]) or not _finite(layout["bottom"]):
        raise ValueError("planningRight and bottom must be numbers")
    return layout


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
