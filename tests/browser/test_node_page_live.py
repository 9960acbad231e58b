"""In a real browser against daphne: a node page opened while its attempt runs follows it to the end —
status, timings, judgment and output — and shows the attempts its run adds after it, without a reload."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, attempt_running, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_node_page_follows_its_attempt_to_the_end(chromium, slow_console_server, alice, task):
    # A test script is the offline agent's longest text (a dozen lines, one every 0.4 s): time to open the page.
    checked = node("draft", node_type="test_script", judgment={"kind": "mechanical", "check_ref": "output_not_empty"})
    run = planned_run(task, {"nodes": [checked], "edges": []})
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{slow_console_server}/tasks/{task.pk}/", "alice")
    page.click(f"#run-{run.run_id} button[data-action='start']")
    attempt = attempt_running(run, "draft")

    page.goto(f"{slow_console_server}/executions/{attempt.pk}/")
    assert page.locator("#exec-status .status").inner_text() == "running"
    assert page.locator("#output pre").inner_text() == "(no output yet)"
    assert page.locator("#judgment").is_hidden()
    page.evaluate("window.stillTheSamePage = true")

    page.wait_for_selector("body[data-attempt-finished='true']")
    assert page.evaluate("window.stillTheSamePage === true"), "the page was reloaded"
    assert page.locator("#exec-status .status").inner_text() == "succeeded"
    attempt.refresh_from_db()
    assert page.locator("#output pre").inner_text().strip() == attempt.output_payload["text"].strip()
    assert page.locator("#judgment").is_visible()
    assert page.locator("#judgment .verdict").inner_text() == "pass"
    page.click("#judgment details.raw summary")
    assert '"ok": true' in page.locator("#judgment details.raw pre").inner_text()
    finished = page.locator(".facts dt:has-text('Finished') + dd time")
    assert finished.get_attribute("datetime").startswith(attempt.finished_at.strftime("%Y-%m-%dT%H:%M:%S"))
    assert page.locator(".page-tabs a[href='#judgment']").is_visible()
    page.screenshot(path=str(ARTIFACTS / "execution-finished-live.png"), full_page=True)


def test_the_node_page_of_a_failed_attempt_shows_the_retry_the_run_makes(chromium, slow_console_server, alice, task):
    # The offline agent's text has no verdict line: every attempt fails its judgment, and is retried once.
    judged = node("draft", judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"},
                  on_fail={"action": "retry_self", "max_attempts": 2})
    run = planned_run(task, {"nodes": [judged], "edges": []})
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{slow_console_server}/tasks/{task.pk}/", "alice")
    page.click(f"#run-{run.run_id} button[data-action='start']")
    attempt = attempt_running(run, "draft")

    page.goto(f"{slow_console_server}/executions/{attempt.pk}/")
    page.evaluate("window.stillTheSamePage = true")
    page.wait_for_selector(".facts a.tag:has-text('#2')")
    assert page.evaluate("window.stillTheSamePage === true"), "the page was reloaded"
    page.wait_for_selector("#exec-status .status[data-status='failed']")
    assert page.locator("#judgment .verdict").inner_text() == "fail"
    assert page.locator("#judgment ul.issues li").count() >= 1
    page.wait_for_selector(".facts a.tag:has-text('#2 failed')")
