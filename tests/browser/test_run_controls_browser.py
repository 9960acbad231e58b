"""In a real browser against daphne: the run graph page's controls — Approve and run, Cancel and Fork
behind a confirmation dialog — and Start on the task page."""

from __future__ import annotations

import pytest

from graphs.models import WorkGraphRun
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


def _page(chromium):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    return page


def test_approve_and_run_starts_the_run_from_its_graph(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a"), node("b", "a")], "edges": []}, status="awaiting_approval")
    page = _page(chromium)
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    page.click("button[data-action='approve']")
    page.wait_for_selector("#run-status .status[data-status='succeeded']")
    assert page.url.endswith(f"/runs/{run.run_id}/")
    run.refresh_from_db()
    assert (run.status, run.review_decision) == ("succeeded", "approved")
    assert page.locator("[data-run-controls] form").count() == 0, "no control applies to a finished run"


def test_cancel_asks_first_and_going_back_changes_nothing(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    page = _page(chromium)
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    page.wait_for_selector("#dag[data-painted='true']")

    page.click("button[data-action='cancel']")
    dialog = page.locator("dialog.confirm-dialog[open]")
    dialog.wait_for()
    assert "Cancel this run?" in dialog.inner_text()
    page.screenshot(path=str(ARTIFACTS / "run-graph-confirm-cancel.png"))
    dialog.locator("button:has-text('Go back')").click()
    page.wait_for_selector("dialog.confirm-dialog[open]", state="detached")
    run.refresh_from_db()
    assert run.status == "ready"

    page.click("button[data-action='cancel']")
    page.locator("dialog.confirm-dialog[open] button:has-text('Yes, do it')").click()
    page.wait_for_selector(".message:has-text('The run is being cancelled.')")
    assert page.url.endswith(f"/runs/{run.run_id}/"), "the form went back to the page it was on"
    run.refresh_from_db()
    assert run.status == "cancelled"


def test_fork_from_the_selected_node_is_in_the_panel(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a"), node("b", "a")], "edges": []}, status="failed")
    factories.ExecutionFactory(run=run, node_id="a", status="succeeded")
    factories.ExecutionFactory(run=run, node_id="b", status="failed", error="timeout: no answer")
    page = _page(chromium)
    sign_in(page, f"{console_server}/runs/{run.run_id}/?node=b", "alice")
    form = page.locator("#panel-body form:has(button:has-text('Fork from this node'))")
    form.wait_for()
    form.locator("button").click()
    dialog = page.locator("dialog.confirm-dialog[open]")
    assert "Fork the run from b?" in dialog.inner_text()
    dialog.locator("button:has-text('Yes, do it')").click()
    page.wait_for_selector(".message:has-text('Forked from b')")
    fork = WorkGraphRun.objects.get(forked_from=run)
    assert page.url.endswith(f"/runs/{fork.run_id}/")


def test_the_task_page_starts_a_ready_run(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    page = _page(chromium)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    page.click(f"#run-{run.run_id} button[data-action='start']")
    page.wait_for_selector(".message:has-text('The run has started.')")
    page.wait_for_selector("h1 .status[data-status='succeeded']")
