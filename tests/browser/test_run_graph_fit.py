"""In a real browser against daphne: Fit fits a graph of up to 20 boxes (planning calls included) on a
laptop's and a desktop's screen. After Fit every box is inside the stage, every name is drawn at least
11 px tall and whole (each is at most 24 characters), and each box's cost reads whole, in cents."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ALL_BOXES_IN_VIEW, ARTIFACTS, sign_in
from tests.browser.dag_runs import pipeline_run

pytestmark = pytest.mark.django_db(transaction=True)

LEGIBLE = 11
# Work nodes per planning call: 5, 8 (the pipeline of five work nodes), 14 and 20 boxes with the planning calls.
SHAPES = {
    5: {"planner": 4},
    8: {"planner": 2, "coder": 2, "validator": 1},
    14: {"planner": 5, "coder": 3, "validator": 3},
    20: {"planner": 6, "coder": 5, "validator": 6},
}
# Each box's name as drawn, the text of its whole drawing, and its cost's text.
BOXES = """
() => [...document.querySelectorAll('#dag .dag-box[data-node-id]')].map((box) => ({
  id: box.dataset.nodeId,
  kind: box.classList.contains('dag-box--planning') ? 'planning' : 'node',
  title: box.querySelector('text.dag-title').textContent,
  texts: [...box.querySelectorAll('text')].map((text) => text.textContent),
  cost: box.querySelector('text.dag-cost')?.textContent ?? null,
}))
"""


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (1440, 900)])
@pytest.mark.parametrize("boxes", sorted(SHAPES))
def test_fit_shows_every_box_of_a_small_graph_with_whole_legible_names(
    chromium, console_server, alice, task, boxes, width, height
):
    run = pipeline_run(task, SHAPES[boxes])
    page = chromium.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    page.wait_for_selector("#dag[data-placed='true'][data-min-label-px]")
    page.click(".dag-toolbar button[aria-label^='Fit']")

    page.wait_for_function(ALL_BOXES_IN_VIEW)
    drawn = page.evaluate(BOXES)
    assert len(drawn) == boxes
    assert page.locator("#dag").get_attribute("data-fit") == "whole"
    assert page.locator("#dag .dag-fit-note").is_hidden()
    assert float(page.locator("#dag").get_attribute("data-min-label-px")) >= LEGIBLE
    for box in drawn:
        assert box["title"] == box["id"], f"{box['id']} is drawn as {box['title']}"
        assert not any("…" in text for text in box["texts"]), box
    costs = [box["cost"] for box in drawn if box["kind"] == "node"]
    assert costs == ["$0.41"] * len(costs)
    page.screenshot(path=str(ARTIFACTS / f"run-graph-fit-{boxes}-{width}.png"))
    assert errors == []
