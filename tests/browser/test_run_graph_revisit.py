"""In a real browser against daphne: a revisit of an unchanged run draws its graph from the browser's
HTTP cache, graph.json revalidated by a 304; once anything in the run changed, the revisit gets the new
graph and draws it."""

from __future__ import annotations

import pytest
from django.utils import timezone

from graphs.models import WorkNodeExecution
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

# Each graph.json the page fetched: its bytes on the wire (a 304 is headers only) and its body's.
_GRAPH_JSON_SIZES = """() => performance.getEntriesByType("resource")
  .filter((entry) => new URL(entry.name).pathname.endsWith("/graph.json"))
  .map((entry) => ({ transfer: entry.transferSize, body: entry.encodedBodySize }))"""


def _visit(page, url: str) -> list[dict]:
    page.goto(url)
    page.wait_for_selector("#dag[data-placed='true']")
    sizes = page.evaluate(_GRAPH_JSON_SIZES)
    assert sizes and all(size["body"] > 1000 for size in sizes), sizes
    return sizes


def test_an_unchanged_run_is_drawn_from_the_cache_and_a_changed_one_afresh(chromium, console_server, alice, task):
    nodes = [node("n0")] + [node(f"n{i}", f"n{(i - 1) // 2}") for i in range(1, 60)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="running")
    now = timezone.now()
    WorkNodeExecution.objects.bulk_create(
        WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status="succeeded",
                          started_at=now, finished_at=now) for n in nodes
    )
    url = f"{console_server}/runs/{run.run_id}/"
    page = chromium.new_page(viewport={"width": 1200, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, url, "alice")
    page.wait_for_selector("#dag[data-placed='true']")

    revisit = _visit(page, url)
    assert all(size["transfer"] < size["body"] for size in revisit), f"graph.json was fetched again: {revisit}"

    WorkNodeExecution.objects.filter(run=run, node_id="n59").update(status="failed")
    changed = _visit(page, url)
    assert all(size["transfer"] > size["body"] for size in changed), f"graph.json came from the cache: {changed}"
    assert page.locator("#dag .dag-box[data-node-id='n59']").get_attribute("data-status") == "failed"
