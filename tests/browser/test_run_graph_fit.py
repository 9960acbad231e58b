"""In a real browser against daphne: Fit fits a graph of up to 20 boxes (planning calls included) on a
laptop's and a desktop's screen, the demo's own pipeline and one both deep and wide among them. After Fit
every box is inside the stage, every name is drawn at least 11 px tall and whole when it is at most 24
characters, and each box's cost reads whole, in cents."""

from __future__ import annotations

import pytest

from graphs.demo import demo_data_load, demo_pipeline_run
from graphs.models import PLANNING_NODE_ID, WorkGraphRun
from tests.browser.conftest import ALL_BOXES_IN_VIEW, ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.browser.dag_runs import DEEP_AND_WIDE, DEEP_AND_WIDE_LOOPS, pipeline_run, staged_run

pytestmark = pytest.mark.django_db(transaction=True)

LEGIBLE = 11
# A name this long fits its box whole; a longer one may be cut.
WHOLE_NAME = 24
SCREENS = [(1280, 800), (1440, 900)]
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
PASSWORD = "correct horse battery staple"


def _fitted(chromium, url: str, username: str, *, width: int, height: int):
    """The run graph at ``url`` at Fit, once every box is on its stage; the page and its script errors."""
    page = chromium.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, url, username)
    page.wait_for_selector("#dag[data-placed='true'][data-min-label-px]")
    page.click(".dag-toolbar button[aria-label^='Fit']")
    page.wait_for_function(ALL_BOXES_IN_VIEW)
    return page, errors


def _drawn_whole_and_legible(page) -> list[dict]:
    """The boxes drawn, once checked: the whole graph fitted at a legible zoom, every name that fits a box
    drawn whole."""
    drawn = page.evaluate(BOXES)
    assert page.locator("#dag").get_attribute("data-fit") == "whole"
    assert page.locator("#dag .dag-fit-note").is_hidden()
    assert float(page.locator("#dag").get_attribute("data-min-label-px")) >= LEGIBLE
    for box in drawn:
        if len(box["id"]) <= WHOLE_NAME:
            assert box["title"] == box["id"], f"{box['id']} is drawn as {box['title']}"
            assert not any("…" in text for text in box["texts"]), box
    return drawn


@pytest.mark.parametrize(("width", "height"), SCREENS)
@pytest.mark.parametrize("boxes", sorted(SHAPES))
def test_fit_shows_every_box_of_a_small_graph_with_whole_legible_names(
    chromium, console_server, alice, task, boxes, width, height
):
    run = pipeline_run(task, SHAPES[boxes])
    page, errors = _fitted(chromium, f"{console_server}/runs/{run.run_id}/", "alice", width=width, height=height)

    drawn = _drawn_whole_and_legible(page)
    assert len(drawn) == boxes
    costs = [box["cost"] for box in drawn if box["kind"] == "node"]
    assert costs == ["$0.41"] * len(costs)
    page.screenshot(path=str(ARTIFACTS / f"run-graph-fit-{boxes}-{width}.png"))
    assert errors == []


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_fit_shows_a_deep_and_wide_graph_of_20_boxes_whole(chromium, console_server, alice, task, width, height):
    run = staged_run(task, DEEP_AND_WIDE, DEEP_AND_WIDE_LOOPS)
    page, errors = _fitted(chromium, f"{console_server}/runs/{run.run_id}/", "alice", width=width, height=height)

    drawn = _drawn_whole_and_legible(page)
    assert len(drawn) == 20
    assert {box["cost"] for box in drawn if box["kind"] == "node"} == {"$0.41"}
    page.screenshot(path=str(ARTIFACTS / f"run-graph-fit-deep-and-wide-{width}.png"))
    assert errors == []


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_fit_shows_the_demos_own_pipeline_whole(chromium, console_server, width, height):
    # Built as `make run` builds it: the offline pipeline of the demo's task, its three planning calls
    # (planner, coder, validator) each adding a stage of long dependency chains and fan-outs.
    login, demo_task = demo_data_load(password=PASSWORD)
    demo_pipeline_run(task=demo_task)
    run = WorkGraphRun.objects.get(task=demo_task)
    planning = set(run.executions.filter(node_id__startswith=PLANNING_NODE_ID).values_list("node_id", flat=True))
    assert len(planning) == 3
    page, errors = _fitted(chromium, f"{console_server}/runs/{run.run_id}/", login.username, width=width,
                           height=height)

    drawn = _drawn_whole_and_legible(page)
    work = {node["node_id"] for node in run.graph_manifest["nodes"]}
    assert {box["id"] for box in drawn} == work | planning
    page.screenshot(path=str(ARTIFACTS / f"run-graph-fit-demo-{width}.png"))
    assert errors == []
