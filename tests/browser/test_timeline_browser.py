"""In a real browser against daphne: the "as it ran" timeline of a 100-node run — one row per node,
each bar saying how long it took, the critical path marked, lanes legible — and of the demo's run: Fit
shows all of it, lane names stay in view while panning, a bar tells its facts on hover and opens its node."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.browser.dag_runs import TWINS, demo_like_run
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

BARS = """
() => [...document.querySelectorAll('#dag .dag-box--attempt')].map((box) => ({
  id: box.dataset.nodeId, critical: box.dataset.critical === 'true', text: box.textContent,
}))
"""


def _hundred_node_run(task):
    # Ten branches of ten nodes; branch 7 is slow, so the critical path runs down it. Node b7_3 failed once.
    nodes = [node("root")]
    for branch in range(10):
        previous = "root"
        for step in range(10):
            nodes.append(node(f"b{branch}_{step}", previous))
            previous = f"b{branch}_{step}"
    nodes = nodes[:100]
    run = planned_run(task, {"nodes": nodes, "edges": []}, status="succeeded")
    t0 = timezone.now() - timedelta(hours=1)
    run.executions.filter(node_id="__planning__").update(started_at=t0 - timedelta(seconds=5), finished_at=t0)
    factories.ExecutionFactory(run=run, node_id="root", status="succeeded", started_at=t0,
                               finished_at=t0 + timedelta(seconds=3))
    for spec in nodes[1:]:
        branch, step = (int(part) for part in spec["node_id"][1:].split("_"))
        took = 9 if branch == 7 else 2
        start = t0 + timedelta(seconds=3 + step * (took + 1))
        if spec["node_id"] == "b7_3":
            factories.ExecutionFactory(run=run, node_id="b7_3", status="failed", attempt=1, started_at=start,
                                       finished_at=start + timedelta(seconds=4))
            start += timedelta(seconds=4)
            factories.ExecutionFactory(run=run, node_id="b7_3", status="succeeded", attempt=2, cause="retry_self",
                                       started_at=start, finished_at=start + timedelta(seconds=took - 4))
            continue
        factories.ExecutionFactory(run=run, node_id=spec["node_id"], status="succeeded", started_at=start,
                                   finished_at=start + timedelta(seconds=took))
    return run


def test_the_timeline_of_a_hundred_nodes_is_readable_with_durations_and_its_critical_path(
    chromium, console_server, alice, task
):
    run = _hundred_node_run(task)
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/?view=timeline", "alice")
    page.wait_for_selector("#dag[data-view='timeline'] .dag-box--attempt")
    bars = page.evaluate(BARS)

    assert len(bars) == 102  # one bar per attempt (and the planning call): b7_3 has two, on its one row
    assert len({bar["id"] for bar in bars}) == 101
    assert any("9.0 s" in bar["text"] for bar in bars), "bars say how long they took"
    critical = [bar["id"] for bar in bars if bar["critical"]]
    assert critical[:2] == ["__planning__", "root"] and set(critical[2:]) == {f"b7_{step}" for step in range(10)}
    assert critical.count("b7_3") == 2, "the retry and the attempt it retried are both on the path"

    # Read in one step of the page's own: the live graph may draw again between finding a name and measuring it.
    lane_height = page.wait_for_function(LANE_NAME_HEIGHT, arg="b0_0 ·").json_value()
    assert lane_height >= 9, "lane names stay legible"
    page.screenshot(path=str(ARTIFACTS / "run-timeline-100.png"))


# The drawn height of the first lane name holding `part`, once one is drawn.
LANE_NAME_HEIGHT = """
(part) => {
  const name = [...document.querySelectorAll('#dag text')].find((text) => text.textContent.includes(part));
  const height = name ? name.getBoundingClientRect().height : 0;
  return height > 0 ? height : null;
}
"""


# Every bar and the stage, on screen: whether each bar lies wholly inside the stage.
BARS_IN_STAGE = """
() => {
  const stage = document.querySelector('#dag .dag-stage').getBoundingClientRect();
  const bars = [...document.querySelectorAll('#dag .dag-box--attempt')];
  return bars.length > 0 && bars.every((bar) => {
    const r = bar.getBoundingClientRect();
    return r.left >= stage.left - 1 && r.right <= stage.right + 1
      && r.top >= stage.top - 1 && r.bottom <= stage.bottom + 1;
  });
}
"""
LANE_NAMES_IN_STAGE = """
() => {
  const stage = document.querySelector('#dag .dag-stage').getBoundingClientRect();
  const names = [...document.querySelectorAll('#dag text.dag-lane-name')];
  return names.length > 0 && names.every((name) => {
    const r = name.getBoundingClientRect();
    return r.left >= stage.left - 1 && r.right <= stage.right + 1;
  });
}
"""


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
def test_the_timeline_fits_the_whole_run_keeps_its_lane_names_and_tells_a_bars_facts(
    chromium, console_server, alice, task, width, height
):
    run = demo_like_run(task)
    page = chromium.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/?view=timeline", "alice")
    page.wait_for_selector("#dag[data-view='timeline'] .dag-box--attempt")
    page.locator("#dag .dag-stage").scroll_into_view_if_needed()
    page.click(".dag-toolbar button[aria-label^='Fit']")
    # The run's 56 s, first start to last end: every bar (a run of 15 lanes fits the stage's height too).
    page.wait_for_function(BARS_IN_STAGE)
    assert page.locator("#dag .dag-box--attempt").count() == 18  # 17 attempts and the planning call
    page.screenshot(path=f"/tmp/run-timeline-demo-{width}.png")

    # Panning sideways keeps the lane names in view.
    stage = page.locator("#dag .dag-stage").bounding_box()
    y = stage["y"] + stage["height"] / 2
    page.mouse.move(stage["x"] + stage["width"] - 20, y)
    page.mouse.down()
    page.mouse.move(stage["x"] + stage["width"] - 20 - 600, y, steps=12)
    page.mouse.up()
    assert not page.evaluate(BARS_IN_STAGE), "the drag did not pan"
    assert page.evaluate(LANE_NAMES_IN_STAGE)
    page.click(".dag-toolbar button[aria-label^='Fit']")
    page.wait_for_function(BARS_IN_STAGE)

    # Hovering a bar tells its facts; clicking it opens its node.
    bar = page.locator(f"#dag .dag-box--attempt[data-node-id='{TWINS[0]}']")
    bar.hover()
    tooltip = page.locator("#dag .dag-tooltip")
    tooltip.wait_for(state="visible")
    facts = tooltip.inner_text()
    for fact in (TWINS[0], "Attempt 1", "Cause: initial", "Took: 3.0 s", "Cost: $0.04"):
        assert fact in facts, facts
    bar.click()
    page.wait_for_function(f"() => new URL(location.href).searchParams.get('node') === {TWINS[0]!r}")
    page.wait_for_selector(f"#panel:not([hidden]) #panel-title:text('{TWINS[0]}')")
