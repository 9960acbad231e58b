"""In a real browser against daphne: a run of more work nodes than the page draws at once opens collapsed
into stages from a graph.json of its nodes' statuses alone; opening a stage fetches the whole graph and
draws the stage's nodes with their statuses."""

from __future__ import annotations

import pytest
from django.utils import timezone

from graphs.layout.compute import MAX_WORK_NODES
from graphs.models import WorkNodeExecution
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

# Each graph.json the page fetched, by its query.
_GRAPH_JSON_FETCHES = """() => performance.getEntriesByType("resource")
  .filter((entry) => new URL(entry.name).pathname.endsWith("/graph.json"))
  .map((entry) => new URL(entry.name).search)"""


def _stage_label(page, index: int) -> str:
    return page.locator(f"#dag .dag-box[data-node-id='stage:{index}']").get_attribute("aria-label")


def test_a_run_too_big_to_draw_opens_by_stage_and_a_stage_opened_is_drawn_whole(chromium, console_server, alice,
                                                                                task):
    # Three nodes of the designer's own, then the rest of the planner's: two stages.
    designed = [node("d0", subagent_type="designer"), node("d1", "d0", subagent_type="designer"),
                node("d2", "d1", subagent_type="designer")]
    planned = [node(f"n{i}", "d2") for i in range(MAX_WORK_NODES - 2)]
    nodes = designed + planned
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="running")
    now = timezone.now()
    WorkNodeExecution.objects.bulk_create(
        WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type=n.get("subagent_type", "planner"),
                          status="failed" if n["node_id"] == "d1" else "succeeded", started_at=now, finished_at=now)
        for n in nodes[:-1]
    )
    url = f"{console_server}/runs/{run.run_id}/"
    page = chromium.new_page(viewport={"width": 1200, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, url, "alice")
    page.wait_for_selector("#dag[data-painted='true']")

    assert _stage_label(page, 0) == "designer · 3 nodes: ✓ 2 succeeded · ✕ 1 failed"
    assert _stage_label(page, 1).startswith(f"planner · {MAX_WORK_NODES - 2:,} nodes: ")
    assert page.evaluate(_GRAPH_JSON_FETCHES) == [""]

    stages_text = page.locator("#dag").inner_text()
    page.click("#dag .dag-box[data-node-id='stage:0']")
    page.wait_for_selector("#dag .dag-box[data-node-id='d2']")

    assert page.evaluate(_GRAPH_JSON_FETCHES) == ["", "?whole=1"]
    assert page.locator("#dag .dag-box[data-node-id='d1']").get_attribute("data-status") == "failed"
    assert page.locator("#dag .dag-box").count() == 3
    assert "Stage 1 of 2: designer" in page.locator("#dag").inner_text()
    assert stages_text != page.locator("#dag").inner_text()

    # Opened on its timeline, which draws every attempt, the page fetches the whole graph for it.
    timeline = chromium.new_page(viewport={"width": 1200, "height": 900})
    timeline.set_default_timeout(PAGE_WAIT_MS)
    timeline.context.add_cookies(page.context.cookies())
    timeline.goto(f"{url}?view=timeline")
    timeline.wait_for_function(f"() => ({_GRAPH_JSON_FETCHES})().includes('?whole=1')")
    timeline.wait_for_selector("#dag canvas.dag-surface")
