"""In a real browser against daphne: sign in, create a task, run the pipeline and watch it live.

Covers the DAG (statuses changing without a reload, the loop-back arc and its count), a node's live
log in the side panel, the node page and the planning inspector. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import pytest

from graphs.models import Task
from tests.browser.conftest import ALL_BOXES_IN_VIEW, ARTIFACTS, PAGE_WAIT_MS, raw_log_open, sign_in
from tests.browser.dag_runs import box_click

pytestmark = pytest.mark.django_db(transaction=True)

TERMINAL = {"succeeded", "failed", "blocked", "cancelled"}


def test_a_lead_runs_a_pipeline_and_watches_it_live(chromium, console_server, alice):
    page = chromium.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)

    sign_in(page, f"{console_server}/", "alice")
    page.wait_for_selector("h1:has-text('Dashboard')")
    page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

    page.click("a:has-text('Tasks')")
    page.click("a:has-text('New task')")
    page.fill("#id_title", "Nightly CSV export")
    page.fill("#id_goal_text", "Export the reports table as CSV every night.")
    page.fill("#id_deliverables", "A scheduled export job\nA download link")
    page.fill("#id_acceptance_criteria", "The file opens in a spreadsheet")
    page.screenshot(path=str(ARTIFACTS / "task-new.png"), full_page=True)
    page.click("button:has-text('Create task')")
    page.wait_for_selector("h1:has-text('Nightly CSV export')")
    task = Task.objects.get(title="Nightly CSV export")

    page.click("#run-pipeline")
    page.wait_for_selector(".run-tree")  # the page notices the run once the planner has made it
    page.screenshot(path=str(ARTIFACTS / "task-detail-running.png"), full_page=True)

    page.click(".run-tree a:has-text('Graph')")
    page.wait_for_selector("#dag[data-painted='true']")
    first_seen: dict[str, str] = {}
    changed_live = False
    loop_back_drawn = False
    for _ in range(600):  # bounded: about a minute at most
        statuses = page.eval_on_selector_all(
            ".dag-box[data-node-id][data-status]", "els => els.map(e => [e.dataset.nodeId, e.dataset.status])"
        )
        for node_id, status in statuses:
            before = first_seen.setdefault(node_id, status)
            changed_live |= before not in TERMINAL and status in TERMINAL
        loop_back_drawn |= page.locator(".dag-link--on_failure").count() > 0
        task.refresh_from_db()
        if task.status in ("succeeded", "failed") and changed_live:
            break
        page.wait_for_timeout(100)
    assert changed_live, "no node changed status on the open graph"
    assert loop_back_drawn, "the loop-back edge was not drawn"
    assert task.status == "succeeded", task.outcome
    # Every node the coder and the validator appended while the page was open ends on screen.
    run = task.runs.get()
    drawn = len(run.graph_manifest["nodes"]) + run.executions.filter(node_id__startswith="__planning__").count()
    page.wait_for_function(f"() => document.querySelectorAll('#dag .dag-box[data-node-id]').length === {drawn}")
    page.wait_for_function(ALL_BOXES_IN_VIEW)  # its 17 boxes fit legibly, wrapped to the stage
    page.wait_for_function(
        "() => [...document.querySelectorAll('.dag-arc-label text')].some(t => /1/.test(t.textContent))"
    )
    page.screenshot(path=str(ARTIFACTS / "run-graph.png"), full_page=True)

    box_click(page, "prd")
    page.wait_for_selector("#panel:not([hidden]) #panel-body .log-lines li")
    assert "node_start" in page.inner_text("#panel-body .log-lines")
    page.screenshot(path=str(ARTIFACTS / "run-graph-panel.png"), full_page=True)

    page.click(".dag-toolbar button:has-text('As it ran')")
    page.wait_for_selector("#dag[data-view='timeline']")
    page.screenshot(path=str(ARTIFACTS / "run-graph-timeline.png"), full_page=True)

    page.click("#panel-body a:has-text('Open the node page')")
    page.wait_for_selector("#trace .trace-group .trace-output")  # the offline agent's output, in its trace
    raw_log_open(page)
    page.wait_for_selector("#log-lines li")
    assert page.locator("#log-lines li").count() >= 3
    page.screenshot(path=str(ARTIFACTS / "execution.png"), full_page=True)

    page.goto(f"{console_server}/tasks/{task.pk}/")
    page.click(".run-tree a:has-text('Planning')")
    page.wait_for_selector("h1:has-text('Planning inspector')")
    page.wait_for_selector(".mini-dag[data-painted='true']")
    page.locator(".planning-call").nth(1).screenshot(path=str(ARTIFACTS / "planning-call-coder.png"))
    calls = page.locator(".planning-call h2").all_inner_texts()
    assert [call.split()[0] for call in calls] == ["__planning__", "__planning__:coder", "__planning__:validator"]
    page.locator(".planning-call details summary:has-text('The exact prompt')").first.click()
    assert "Nightly CSV export" in page.locator(".planning-call pre.output").first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "planning-inspector.png"), full_page=True)


def test_the_task_page_follows_its_pipeline_to_the_end_without_a_reload(chromium, console_server, alice, task):
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    page.wait_for_selector("h1 .status[data-status='draft']")

    page.click("#run-pipeline")
    page.wait_for_selector("h1 .status[data-status='planning']")
    page.evaluate("window.stillTheSamePage = true")
    page.wait_for_selector("h1 .status[data-status='succeeded']")

    assert page.evaluate("window.stillTheSamePage === true"), "the page was reloaded"
    task.refresh_from_db()
    assert task.status == "succeeded"
    done = "() => /^(\\d+)\\/\\1 done · \\1 succeeded$/.test(document.querySelector('[data-progress]').textContent)"
    page.wait_for_function(done)
