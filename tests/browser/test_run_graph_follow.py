"""In a real browser against daphne: the run graph keeps appended nodes in view, a node is in the URL,
and the panel shows every attempt with its own reason.

Nodes are appended from the test (another process, as a worker would); the page notices through its
resync and redraws them.
"""

from __future__ import annotations

import re

import pytest
from django.db.models import F

from graphs.domain.manifest import merge_manifests
from graphs.models import WorkGraphRun
from tests.browser.conftest import ALL_BOXES_IN_VIEW, ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)
# A window tall enough for the appended graphs here to fit whole with legible names.
TALL = 1700

def _chain(prefix: str, length: int, after: str | None = None) -> list[dict]:
    nodes = []
    for index in range(length):
        previous = f"{prefix}{index - 1}" if index else after
        nodes.append(node(f"{prefix}{index}", *([previous] if previous else [])))
    return nodes


def _append(run: WorkGraphRun, nodes: list[dict]) -> None:
    run.refresh_from_db()
    addition = {"nodes": nodes, "edges": edges_for(nodes)}
    WorkGraphRun.objects.filter(pk=run.pk).update(
        graph_manifest=merge_manifests(run.graph_manifest, addition), manifest_version=F("manifest_version") + 1
    )


def _box_count(page) -> int:
    return page.locator("#dag .dag-box[data-node-id]").count()


def test_appended_nodes_come_into_view_while_the_user_has_not_moved_the_drawing(chromium, console_server, alice, task):
    first = _chain("plan", 2)
    run = planned_run(task, {"nodes": first, "edges": edges_for(first)})
    # Tall enough for the grown graph to fit whole at a legible zoom (legibility comes before the whole).
    page = chromium.new_page(viewport={"width": 1200, "height": TALL})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    page.wait_for_selector("#dag[data-placed='true']")

    for stage, length in (("code", 4), ("check", 4)):
        _append(run, _chain(stage, length, after="plan1"))
        expected = _box_count(page) + length
        page.wait_for_function(f"() => document.querySelectorAll('#dag .dag-box[data-node-id]').length >= {expected}")
    page.wait_for_function(ALL_BOXES_IN_VIEW)
    assert page.locator(".dag-new-nodes").is_hidden()
    page.screenshot(path=str(ARTIFACTS / "run-graph-appended.png"))


def test_nodes_appended_between_the_graphs_fetch_and_the_sockets_opening_are_drawn(
    chromium, console_server, alice, task
):
    first = _chain("plan", 2)
    run = planned_run(task, {"nodes": first, "edges": edges_for(first)})
    page = chromium.new_page(viewport={"width": 1200, "height": TALL})
    page.set_default_timeout(PAGE_WAIT_MS)

    # The page opens its socket once graph.json is drawn: the nodes are appended just before it reaches
    # the server, so the first snapshot is the only word the page gets of them (no attempt, no event).
    def appended_then_connected(socket) -> None:
        _append(run, _chain("code", 3, after="plan1"))
        socket.connect_to_server()

    page.route_web_socket(re.compile(r"/ws/runs/"), appended_then_connected)
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    for node_id in ("code0", "code1", "code2"):
        page.wait_for_selector(f"#dag .dag-box[data-node-id='{node_id}']")


def test_a_user_who_zoomed_keeps_the_view_and_is_told_of_new_nodes(chromium, console_server, alice, task):
    first = _chain("plan", 2)
    run = planned_run(task, {"nodes": first, "edges": edges_for(first)})
    page = chromium.new_page(viewport={"width": 1200, "height": TALL})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    page.wait_for_selector("#dag[data-placed='true']")
    page.click(".dag-toolbar button[aria-label='Zoom in']")
    page.click(".dag-toolbar button[aria-label='Zoom in']")
    zoomed = page.locator("#dag .dag-box[data-node-id='plan0']").bounding_box()

    _append(run, _chain("code", 6, after="plan1"))
    hint = page.locator(".dag-new-nodes")
    hint.wait_for(state="visible")
    assert hint.inner_text() == "6 new nodes · fit"
    assert page.locator("#dag .dag-box[data-node-id='plan0']").bounding_box() == zoomed, "the view moved"

    hint.click()
    page.wait_for_function(ALL_BOXES_IN_VIEW)
    assert hint.is_hidden()


def test_a_node_is_linked_by_the_url_and_back_and_escape_close_it(chromium, console_server, alice, task,
                                                                    scripted_runner, inline_executor):
    from graphs.engine import run_start

    nodes = [node("draft"), node("review", "draft", judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"},
                                 on_fail={"action": "retry_self", "max_attempts": 2})]
    scripted_runner.replies[("node", "review", 1)] = "VERDICT: pass with notes"
    scripted_runner.replies[("node", "review", 2)] = "VERDICT: pass"
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()

    page = chromium.new_page(viewport={"width": 1200, "height": 800})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/?node=review", "alice")
    page.wait_for_selector("#panel:not([hidden]) .attempts li[data-attempt='2']")
    first = page.locator("#panel .attempts li[data-attempt='1']")
    assert "failed" in first.inner_text()
    assert "the verdict is 'pass with notes', not pass" in first.locator(".reason").inner_text()
    assert "retry: its judgment failed" in page.locator("#panel .attempts li[data-attempt='2']").inner_text()
    assert page.locator("#dag details.dag-legend").get_attribute("open") is None, "the legend starts closed"
    page.screenshot(path=str(ARTIFACTS / "run-graph-deep-link.png"))

    page.click(".dag-box[data-node-id='draft']")
    page.wait_for_function("() => new URL(location.href).searchParams.get('node') === 'draft'")
    page.wait_for_selector("#panel-title:text('draft')")
    page.go_back()
    page.wait_for_function("() => new URL(location.href).searchParams.get('node') === 'review'")
    page.wait_for_selector("#panel-title:text('review')")

    page.keyboard.press("Escape")
    page.wait_for_selector("#panel", state="hidden")
    assert page.evaluate("() => new URL(location.href).searchParams.get('node')") is None
    page.go_back()
    page.wait_for_selector("#panel:not([hidden])")
