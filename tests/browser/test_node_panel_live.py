"""In a real browser against daphne: the run graph's side panel, open on a node before it starts, follows
it through each state — not started, running with its live output, finished with its judgment and
output — and shows nothing as running once the run has finished."""

from __future__ import annotations

import pytest

from graphs.models import WorkGraphRun, WorkNodeExecution
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

PANEL_STATE = "() => document.getElementById('panel-body').dataset.state === '{state}'"


def test_the_panel_of_a_node_that_starts_and_ends_while_open_shows_each_state(chromium, slow_console_server, alice,
                                                                             task):
    checked = {"judgment": {"kind": "mechanical", "check_ref": "output_not_empty"}}
    nodes = [node("first", **checked), node("second", "first", **checked)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_WAIT_MS)
    page = context.new_page()
    sign_in(page, f"{slow_console_server}/runs/{run.run_id}/?node=second", "alice")
    page.wait_for_function(PANEL_STATE.format(state="not-started"))
    assert page.locator("#panel-body").inner_text().strip() == "This node has not started yet."

    starter = context.new_page()
    starter.goto(f"{slow_console_server}/tasks/{task.pk}/")
    starter.click(f"#run-{run.run_id} button[data-action='start']")
    page.evaluate("window.stillTheSamePage = true")

    page.wait_for_function(PANEL_STATE.format(state="running"))
    assert page.locator("#panel-body .status").first.inner_text() == "running"
    assert page.locator("#panel-body pre[data-field='output']").inner_text() == "(no output yet)"
    page.wait_for_selector("#panel-body .log-lines li:has-text('agent_output')")
    assert "node_start attempt 1 · cause initial" in page.locator("#panel-body .log-lines").inner_text()
    page.screenshot(path=str(ARTIFACTS / "run-graph-panel-running.png"))

    page.wait_for_function(PANEL_STATE.format(state="succeeded"))
    second = WorkNodeExecution.objects.get(run=run, node_id="second")
    assert page.locator("#panel-body .status").first.inner_text() == "succeeded"
    assert page.locator("#panel-body .judgment-reading .verdict").inner_text() == "pass"
    assert page.locator("#panel-body pre[data-field='output']").inner_text().strip() == (
        second.output_payload["text"].strip())
    assert page.locator("#panel-body h3:has-text('Log')").count() == 1
    assert page.evaluate("window.stillTheSamePage === true"), "the page was reloaded"

    page.wait_for_function("() => document.querySelector('#run-status .status').dataset.status === 'succeeded'")
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    body = page.locator("#panel-body").inner_text()
    assert "running" not in body and "no output yet" not in body and "Live log" not in body
    page.screenshot(path=str(ARTIFACTS / "run-graph-panel-finished.png"))

    page.click(".dag-box[data-node-id='first']")
    page.wait_for_selector("#panel-title:text('first')")
    page.wait_for_function(PANEL_STATE.format(state="succeeded"))
    context.close()
