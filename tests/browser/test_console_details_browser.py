"""In a real browser against daphne: the small things a first use trips on — statuses in words, log
lines with their time, a favicon, the workflow id only for workflow tasks, no folder path on the
dashboard."""

from __future__ import annotations

import pytest

from graphs.logs.store import log_append, log_file_close
from tests import factories
from tests.browser.conftest import PAGE_WAIT_MS, raw_log_open, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


def _page(chromium):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    return page


def test_statuses_read_as_words_and_the_dashboard_shows_no_folder(chromium, console_server, alice, task, project):
    planned_run(task, {"nodes": [node("a")], "edges": []}, status="awaiting_approval")
    page = _page(chromium)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    chip = page.locator(".run-tree h2 .status")
    assert (chip.inner_text(), chip.get_attribute("data-status")) == ("awaiting approval", "awaiting_approval")

    page.goto(f"{console_server}/")
    assert project.target_folder not in page.content()
    icon = page.locator("link[rel=icon]").get_attribute("href")
    assert page.request.get(f"{console_server}{icon}").status == 200


def test_log_lines_carry_their_time(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="succeeded")
    attempt = factories.ExecutionFactory(run=run, node_id="a", status="succeeded")
    log_append(execution=attempt, event="node_start", text="begin")
    log_file_close(execution=attempt)
    page = _page(chromium)
    sign_in(page, f"{console_server}/executions/{attempt.pk}/", "alice")
    raw_log_open(page)
    stamp = page.locator("#log-lines li time.ts").first
    assert len(stamp.inner_text()) == len("12:34:56.789")
    assert stamp.get_attribute("datetime").startswith(stamp.get_attribute("title")[:10])


def test_the_workflow_id_shows_only_for_a_workflow_task(chromium, console_server, alice, project):
    page = _page(chromium)
    sign_in(page, f"{console_server}/tasks/new/", "alice")
    workflow_field = page.locator(".field-workflow_id")
    assert workflow_field.is_hidden()
    page.select_option("select[name=task_type]", "workflow")
    assert workflow_field.is_visible()
    page.select_option("select[name=task_type]", "dynamic")
    assert workflow_field.is_hidden()
