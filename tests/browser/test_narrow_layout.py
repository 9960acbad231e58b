"""In a real browser against daphne: every page works on a phone (390 px) and at 200 % zoom (a 1280 px
window is then 640 CSS px wide): nothing scrolls sideways, Sign out is on screen, and the DAG keeps
its height when a node is tapped."""

from __future__ import annotations

import pytest

from graphs.demo import demo_data_load, demo_pipeline_run
from graphs.models import WorkGraphRun
from tests.browser.conftest import ARTIFACTS, OVERFLOW, PAGE_WAIT_MS, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"

@pytest.fixture
def demo(settings):
    login, task = demo_data_load(password=PASSWORD)
    demo_pipeline_run(task=task)
    run = WorkGraphRun.objects.get(task=task)
    node = run.executions.exclude(node_id__startswith="__").order_by("created_at").first()
    looped = run.executions.filter(cause="loop_back").order_by("created_at").first()
    first = run.executions.get(node_id=looped.node_id, attempt=1)
    return {"user": login.username, "task": task, "run": run, "node": node, "looped": looped, "first": first}


def _pages(demo) -> dict[str, str]:
    task, run, node = demo["task"], demo["run"], demo["node"]
    return {
        "dashboard": "/",
        "tasks": "/tasks/",
        "runs": "/runs/",
        "task-new": "/tasks/new/",
        "task": f"/tasks/{task.pk}/",
        "run-graph": f"/runs/{run.run_id}/",
        "planning": f"/runs/{run.run_id}/planning/",
        "node": f"/executions/{node.pk}/",
        "compare-attempts": f"/executions/{demo['first'].pk}/compare/{demo['looped'].pk}/",
        "skills": "/skills/",
        "skill-new": "/skills/new/",
        "agents": "/agents/",
        "agent": "/agents/coder/",
        "agent-edit": "/agents/coder/edit/",
    }


@pytest.mark.parametrize("width", [390, 640])
def test_no_page_scrolls_sideways_and_sign_out_is_on_screen(chromium, console_server, demo, width):
    page = chromium.new_page(viewport={"width": width, "height": 844})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/login/", demo["user"])
    page.wait_for_selector("h1")
    problems = {}
    for name, path in _pages(demo).items():
        page.goto(f"{console_server}{path}")
        page.wait_for_load_state("networkidle")
        overflow = page.evaluate(OVERFLOW)
        if overflow["scroll"] > 0:
            problems[name] = overflow
        sign_out = page.locator(".signout button").bounding_box()
        if not sign_out or sign_out["x"] + sign_out["width"] > width:
            problems.setdefault(name, {})["sign_out"] = sign_out
        page.screenshot(path=str(ARTIFACTS / f"narrow-{width}-{name}.png"), full_page=True)
    assert problems == {}


# The work boxes (not planning calls) wholly inside the graph's stage, by node id.
WORK_BOXES_IN_VIEW = """
() => {
  const stage = document.querySelector('#dag .dag-stage').getBoundingClientRect();
  return [...document.querySelectorAll('#dag .dag-box[data-node-id]')]
    .filter((box) => !box.dataset.nodeId.startsWith('__'))
    .filter((box) => {
      const r = box.getBoundingClientRect();
      return r.left >= stage.left && r.right <= stage.right && r.top >= stage.top && r.bottom <= stage.bottom;
    })
    .map((box) => box.dataset.nodeId);
}
"""


def test_tapping_a_node_on_a_phone_keeps_the_graph(chromium, console_server, demo):
    page = chromium.new_page(viewport={"width": 390, "height": 844}, has_touch=True)
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{demo['run'].run_id}/", demo["user"])
    page.wait_for_selector("#dag[data-placed='true'][data-min-label-px]")
    # A zoomed graph opens on its work nodes: the box tapped is one on screen.
    in_view = page.evaluate(WORK_BOXES_IN_VIEW)
    assert in_view, "no work node on screen to tap"
    page.locator(f".dag-box[data-node-id='{in_view[0]}']").tap()
    page.wait_for_selector("#panel:not([hidden])")
    assert page.locator("#dag").bounding_box()["height"] > 300
    assert page.evaluate(OVERFLOW)["scroll"] == 0


@pytest.mark.parametrize("height", [664, 844])
def test_on_a_phone_the_run_graph_opens_on_its_first_work_nodes(chromium, console_server, demo, height):
    page = chromium.new_page(viewport={"width": 390, "height": height})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{demo['run'].run_id}/", demo["user"])
    page.wait_for_selector("#dag[data-placed='true'][data-min-label-px]")
    assert page.locator("#dag").get_attribute("data-fit") == "legible"  # too big to fit: it opens zoomed

    in_view = page.evaluate(WORK_BOXES_IN_VIEW)
    page.screenshot(path=str(ARTIFACTS / f"narrow-390x{height}-run-graph-opens.png"))
    assert in_view, "no work box is on screen: the graph opened on its planning lane and empty stage"
    assert float(page.locator("#dag").get_attribute("data-min-label-px")) >= 11


# The dashboard's recent-tasks table: how it overflows, scrolls, and draws the cue of its hidden side.
TABLE_SCROLL = """
() => {
  const table = document.querySelector('#recent-tasks table');
  const style = getComputedStyle(table);
  const box = table.getBoundingClientRect();
  const state = {overflowX: style.overflowX, images: style.backgroundImage, attachments: style.backgroundAttachment,
                 hidden: table.scrollWidth - table.clientWidth, right: box.right, width: innerWidth};
  table.scrollLeft = table.scrollWidth;
  state.scrolled = table.scrollLeft;
  return state;
}
"""


def test_on_a_phone_the_dashboards_wide_table_scrolls_inside_itself_with_a_shadow_cue(chromium, console_server, demo):
    page = chromium.new_page(viewport={"width": 390, "height": 844})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/", demo["user"])
    page.wait_for_selector("#recent-tasks table tbody tr")

    table = page.evaluate(TABLE_SCROLL)
    page.screenshot(path=str(ARTIFACTS / "narrow-390-dashboard-table-scrolled.png"))

    assert table["hidden"] > 0, "the table is wider than a phone: this test needs it to overflow"
    assert table["overflowX"] == "auto" and table["right"] <= table["width"], "it scrolls, the page does not"
    assert table["scrolled"] > 0
    # The cue: a shadow on each side the table continues past, each hidden by a cover that scrolls with it.
    assert table["images"].count("radial-gradient") == 2 and table["images"].count("linear-gradient") == 2
    assert table["attachments"] == "local, local, scroll, scroll"
