"""In a real browser against daphne: a run the server has laid out (graphs.layout.run_layouts) is painted from
that layout at once, with no layout worker; with no Node.js on the server the page lays the graph out
itself, and places every node exactly where the server would have."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator

import pytest

from graphs.layout.compute import layout_compute, layout_input
from graphs.layout.run_layouts import run_layout_refresh
from graphs.models import RunLayout
from graphs.reads.graph import run_graph_data
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, console_served, sign_in
from tests.run_builders import planned_run

pytestmark = pytest.mark.django_db(transaction=True)

NODE = shutil.which("node")
# Outside CI a machine without Node.js skips the tests that need it; under CI=true they run, and fail.
needs_node = pytest.mark.skipif(NODE is None and os.environ.get("CI") != "true", reason="Node.js is not installed")
# An untrusted node id: the page must show it as text, never as markup.
HOSTILE = 'n0_0<img src=x onerror="window.__owned=1">'
RECORD_EVENTS = """
window.__dagEvents = [];
for (const name of ["dag:painted", "dag:placed"]) {
  window.addEventListener(name, () => {
    const boxes = [...document.querySelectorAll("#dag .dag-box[data-node-id]")];
    const at = Object.fromEntries(boxes.map((box) => [box.dataset.nodeId, box.getAttribute("transform")]));
    window.__dagEvents.push({ name, at });
  }, true);
}
"""
WORKER_LOADED = """() => performance.getEntriesByType("resource")
  .some((entry) => entry.name.includes("layout-worker.js") || entry.name.includes("elk.bundled.js"))"""

GRAPH_FETCHES = """() => performance.getEntriesByType("resource")
  .filter((entry) => new URL(entry.name).pathname.endsWith("/graph.json")).length"""


def _layered_manifest(*, layers: int, width: int) -> dict:
    """``layers`` rows of ``width`` coder nodes, each needing one or two nodes of the row above."""
    def name(layer: int, slot: int) -> str:
        return HOSTILE if (layer, slot) == (0, 0) else f"n{layer}_{slot}"

    nodes = [
        {
            "node_id": name(layer, slot),
            "subagent_type": "coder",
            "depends_on": [name(layer - 1, (slot + 1) % width), *([name(layer - 1, 0)] if slot % 7 == 0 else [])]
            if layer else [],
        }
        for layer in range(layers)
        for slot in range(width)
    ]
    return {"nodes": nodes, "edges": []}


def _translate(box: list[float]) -> str:
    return f"translate({box[0]},{box[1]})"


@pytest.fixture
def layout_server(transactional_db) -> Iterator[str]:
    with console_served(WORKGRAPH_SERVER_LAYOUT="1") as url:
        yield url


@pytest.fixture
def nodeless_server(transactional_db) -> Iterator[str]:
    with console_served(WORKGRAPH_SERVER_LAYOUT="1", WORKGRAPH_NODE_BINARY="/nonexistent/node") as url:
        yield url


@needs_node
def test_the_page_paints_the_servers_layout_without_starting_the_layout_worker(
    chromium, layout_server, alice, task, settings
):
    settings.WORKGRAPH_SERVER_LAYOUT = True
    run = planned_run(task, _layered_manifest(layers=10, width=30))
    row = run_layout_refresh(run_id=run.pk)
    assert row.status == RunLayout.Status.READY
    page = chromium.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(RECORD_EVENTS)

    sign_in(page, f"{layout_server}/runs/{run.run_id}/", "alice")
    page.wait_for_function("() => window.__dagEvents && window.__dagEvents.length === 2")
    painted, placed = page.evaluate("window.__dagEvents")
    page.screenshot(path=str(ARTIFACTS / "run-graph-server-layout.png"))

    assert painted["at"] == placed["at"], "a sketch was drawn first"
    assert placed["at"] == {node_id: _translate(box) for node_id, *box in row.layout["pos"]}
    assert not page.evaluate(WORKER_LOADED)
    assert page.evaluate(GRAPH_FETCHES) == 1, "the page fetched graph.json besides its preload"
    assert page.locator("#dag .dag-box[data-node-id]").count() == 301
    assert page.evaluate("() => window.__owned") is None
    assert page.locator("#dag img").count() == 0
    assert errors == []


@needs_node
def test_with_no_node_on_the_server_the_page_lays_out_what_the_server_would_have(
    chromium, nodeless_server, alice, task
):
    run = planned_run(task, _layered_manifest(layers=10, width=30))
    page = chromium.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    sign_in(page, f"{nodeless_server}/runs/{run.run_id}/", "alice")
    page.wait_for_selector("#dag[data-placed='true']")
    assert page.evaluate(WORKER_LOADED)
    # The page caches what it laid out once it is idle: the positions ELK gave it, to compare.
    # Keyed by run and flow direction, which the page picks for its stage as the server does for a desktop's.
    prefix = f"dag-layout:v4:{run.run_id}:"
    cached = f"() => Object.keys(localStorage).find((key) => key.startsWith({json.dumps(prefix)}))"
    page.wait_for_function(cached)
    browser = json.loads(page.evaluate(f"() => localStorage.getItem(({cached})())"))["layout"]

    server = layout_compute(drawing=layout_input(run_graph_data(run)), previous=None, node_binary=NODE, timeout=60)
    assert browser["direction"] == server.layout["direction"]
    assert browser["pos"] == server.layout["pos"]
    assert browser["routes"] == server.layout["routes"]
    failed = RunLayout.objects.get(run=run)
    assert failed.status == RunLayout.Status.FAILED and "/nonexistent/node" in failed.error
    assert errors == []
