"""In a real browser against daphne: the run graph is legible at its default view. The demo's shape at
Fit draws every node title at least 11 px tall, at 1440 px and at 390 px, and says so in
``data-min-label-px``; names cut to a box never read the same and hovering shows them whole; a graph too
big to fit legibly opens legible on its first nodes, with a minimap, and Fit says it cannot fit it."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.browser.dag_runs import TWINS, demo_like_run, wide_run

pytestmark = pytest.mark.django_db(transaction=True)

LEGIBLE = 11
# The drawn titles: their text, and the height of their text box on screen.
TITLES = """
() => [...document.querySelectorAll('#dag .dag-box[data-node-id]')].map((box) => {
  const title = box.querySelector('text.dag-title');
  return { id: box.dataset.nodeId, text: title.textContent, height: title.getBoundingClientRect().height };
})
"""
MIN_LABEL_PX = "() => Number(document.querySelector('#dag').dataset.minLabelPx)"


def _open(chromium, url: str, *, width: int, height: int, scheme: str = "light"):
    page = chromium.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, url, "alice")
    page.wait_for_selector("#dag[data-placed='true'][data-min-label-px]")
    return page, errors


def _drag_into_view(page, selector: str) -> None:
    """Pans the drawing by dragging its stage until the element is at the stage's centre."""
    page.locator("#dag .dag-stage").scroll_into_view_if_needed()
    stage = page.locator("#dag .dag-stage").bounding_box()
    box = page.locator(selector).bounding_box()
    cx, cy = stage["x"] + stage["width"] / 2, stage["y"] + stage["height"] / 2
    dx, dy = cx - (box["x"] + box["width"] / 2), cy - (box["y"] + box["height"] / 2)
    # From the middle of the stage's right edge, clear of the minimap (bottom left): the first steps stay
    # on the stage, which then captures the pointer.
    start = (stage["x"] + stage["width"] - 12, cy)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + dx, start[1] + dy, steps=12)
    page.mouse.up()


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
def test_the_demo_at_fit_draws_every_title_legibly_and_cut_names_apart(
    chromium, console_server, alice, task, width, height
):
    run = demo_like_run(task)
    page, errors = _open(chromium, f"{console_server}/runs/{run.run_id}/", width=width, height=height)
    page.click(".dag-toolbar button[aria-label^='Fit']")
    page.wait_for_function(f"() => Number(document.querySelector('#dag').dataset.minLabelPx) >= {LEGIBLE}")

    titles = page.evaluate(TITLES)
    assert len(titles) == 15  # 14 work nodes and the planning call
    assert min(title["height"] for title in titles) >= LEGIBLE, titles
    assert page.evaluate(MIN_LABEL_PX) >= LEGIBLE
    twins = [title["text"] for title in titles if title["id"] in TWINS]
    assert len(set(twins)) == 2 and all("…" in text for text in twins), twins
    assert len({title["text"] for title in titles}) == len(titles), "two boxes read the same"
    page.screenshot(path=f"/tmp/run-graph-demo-{width}.png")

    _drag_into_view(page, f"#dag .dag-box[data-node-id='{TWINS[1]}']")
    page.locator(f"#dag .dag-box[data-node-id='{TWINS[1]}']").hover()
    tooltip = page.locator("#dag .dag-tooltip")
    tooltip.wait_for(state="visible")
    assert tooltip.locator(".dag-tooltip-name").inner_text() == TWINS[1]
    assert errors == []


def test_zoom_and_pan_keep_min_label_px_current(chromium, console_server, alice, task):
    run = demo_like_run(task)
    page, _ = _open(chromium, f"{console_server}/runs/{run.run_id}/", width=1440, height=900)
    before = page.evaluate(MIN_LABEL_PX)
    page.click(".dag-toolbar button[aria-label='Zoom out']")
    page.wait_for_function(f"() => Number(document.querySelector('#dag').dataset.minLabelPx) < {before}")
    page.click(".dag-toolbar button[aria-label^='Fit']")
    page.wait_for_function(f"() => Number(document.querySelector('#dag').dataset.minLabelPx) >= {LEGIBLE}")


def test_a_graph_too_big_to_fit_legibly_opens_legible_with_a_minimap(chromium, console_server, alice, task):
    run = wide_run(task, layers=8, width=30)
    page, errors = _open(chromium, f"{console_server}/runs/{run.run_id}/", width=1440, height=900)
    assert page.evaluate(MIN_LABEL_PX) >= LEGIBLE
    assert page.locator("#dag").get_attribute("data-fit") == "legible"
    page.locator("#dag .dag-minimap").wait_for(state="visible")
    note = page.locator("#dag .dag-fit-note")
    assert "Too large to fit legibly" in note.inner_text()
    # It opens on its first nodes: the top-left box of the drawing is on screen.
    first = page.locator("#dag .dag-box[data-node-id='__planning__']").bounding_box()
    stage = page.locator("#dag .dag-stage").bounding_box()
    assert stage["x"] <= first["x"] < stage["x"] + stage["width"]
    assert stage["y"] <= first["y"] < stage["y"] + stage["height"]

    # The minimap moves the view; Fit brings it back, and still says it cannot fit the graph legibly.
    page.locator("#dag .dag-minimap").click(position={"x": 170, "y": 110})
    page.wait_for_function("() => document.querySelector('#dag .dag-box[data-node-id=\"__planning__\"]')"
                           ".getBoundingClientRect().right < document.querySelector('#dag .dag-stage')"
                           ".getBoundingClientRect().left")
    page.click(".dag-toolbar button[aria-label^='Fit']")
    assert page.evaluate(MIN_LABEL_PX) >= LEGIBLE
    assert note.is_visible()
    page.screenshot(path="/tmp/run-graph-too-big.png")
    assert errors == []


def test_the_flow_direction_switch_is_remembered_for_the_user(chromium, console_server, alice, task):
    run = demo_like_run(task)
    page, errors = _open(chromium, f"{console_server}/runs/{run.run_id}/", width=1440, height=900)
    switch = page.locator(".dag-toolbar .dag-direction")
    before = switch.get_attribute("data-direction")
    after = {"DOWN": "RIGHT", "RIGHT": "DOWN"}[before]
    first = page.locator("#dag .dag-box[data-node-id='brd']").get_attribute("transform")
    switch.click()
    page.wait_for_function(f"() => document.querySelector('.dag-direction').dataset.direction === {after!r}")
    page.wait_for_function(f"() => document.querySelector(\"#dag .dag-box[data-node-id='brd']\")"
                           f".getAttribute('transform') !== {first!r}")
    assert page.evaluate(MIN_LABEL_PX) >= LEGIBLE

    page.reload()
    page.wait_for_selector("#dag[data-placed='true'][data-min-label-px]")
    assert switch.get_attribute("data-direction") == after, "the pick was not remembered"
    assert errors == []
