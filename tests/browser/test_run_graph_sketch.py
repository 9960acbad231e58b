"""In a real browser against daphne: a run too large for one layout band is drawn at once from a sketch,
then redrawn with ELK's layout (static/js/dag/run-graph.js: `dag:painted`, then `dag:placed`)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.factories import RunFactory

pytestmark = pytest.mark.django_db(transaction=True)

# Records each event with where every box was drawn at that moment (capture phase: they do not bubble).
RECORD_EVENTS = """
window.__dagEvents = [];
for (const name of ["dag:painted", "dag:placed"]) {
  window.addEventListener(name, (event) => {
    const boxes = [...document.querySelectorAll("#dag .dag-box[data-node-id]")];
    window.__dagEvents.push({
      name,
      at: Object.fromEntries(boxes.map((box) => [box.dataset.nodeId, box.getAttribute("transform")])),
    });
  }, true);
}
"""


def _layered_manifest(*, layers: int, width: int) -> dict:
    """``layers`` rows of ``width`` coder nodes, each needing one node of the row above, and a loop-back."""
    nodes = [
        {
            "node_id": f"n{layer}_{slot}",
            "subagent_type": "coder",
            "depends_on": [f"n{layer - 1}_{(slot + 1) % width}"] if layer else [],
        }
        for layer in range(layers)
        for slot in range(width)
    ]
    loop_back = {"from": f"n{layers - 1}_0", "to": f"n{layers - 3}_2", "edge_type": "on_failure"}
    return {"nodes": nodes, "edges": [loop_back]}


def test_a_run_of_several_layout_bands_is_sketched_at_once_then_laid_out_by_elk(
    chromium, console_server, alice, task
):
    run = RunFactory(task=task, graph_manifest=_layered_manifest(layers=10, width=30))
    page = chromium.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(RECORD_EVENTS)

    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    # A function, not an expression: Playwright evaluates an expression with eval, which the page CSP refuses.
    page.wait_for_function("() => window.__dagEvents && window.__dagEvents.length === 2")
    sketch, placed = page.evaluate("window.__dagEvents")
    page.screenshot(path=str(ARTIFACTS / "run-graph-300-nodes.png"))

    assert [sketch["name"], placed["name"]] == ["dag:painted", "dag:placed"]
    assert len(sketch["at"]) == len(placed["at"]) == 300
    moved = [node_id for node_id, where in placed["at"].items() if sketch["at"][node_id] != where]
    assert len(moved) > 150, "ELK's layout did not replace the sketch"
    assert page.locator(".dag-link--on_failure").count() == 1

    page.click(".dag-box[data-node-id='n4_7']")
    page.wait_for_selector("#panel:not([hidden]) #panel-title:has-text('n4_7')")
    assert errors == []
