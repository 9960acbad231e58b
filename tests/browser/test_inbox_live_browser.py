"""In a real browser against daphne: a reviewer's inbox shows a plan that comes to wait while the page is
open — planned by a lead elsewhere, in a project that requires plan approval — with the navigation's
count; the reviewer approves it from the inbox and the count drops."""

from __future__ import annotations

import pytest

from graphs.models import WorkGraphRun
from tests.browser.conftest import PAGE_WAIT_MS, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_waiting_plan_appears_live_and_is_approved_from_the_inbox(chromium, console_server, alice, bob, task):
    task.project.require_plan_approval = True
    task.project.save(update_fields=["require_plan_approval"])
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/inbox/", "bob")
    page.wait_for_selector("#inbox-items:has-text('Nothing waits on you.')")
    assert page.locator("#inbox-count").is_hidden()

    # The lead plans the task in a browser of their own while the reviewer's inbox is open.
    lead = chromium.new_context().new_page()
    sign_in(lead, f"{console_server}/tasks/{task.pk}/", "alice")
    lead.click("form[action$='/plan/'] button[type=submit]")

    item = page.locator("#inbox-items .inbox-item[data-kind='approval']")
    item.wait_for()
    run = WorkGraphRun.objects.get(task=task)
    assert run.status == "awaiting_approval"
    assert item.get_attribute("data-run-id") == str(run.run_id)
    assert "Review the plan" in item.inner_text() and "wait behind it" in item.inner_text()
    page.wait_for_selector("#inbox-count:not([hidden]):text-is('1')")

    item.locator("button[data-action='approve']").click()
    page.wait_for_url(f"{console_server}/runs/{run.run_id}/")
    assert page.locator("#inbox-count").is_hidden()
    run.refresh_from_db()
    assert (run.status, run.review_decision, run.reviewed_by_id) == ("ready", "approved", bob.pk)
    page.goto(f"{console_server}/inbox/")
    page.wait_for_selector("#inbox-items:has-text('Nothing waits on you.')")
