"""In a real browser against daphne: a lead registers a webhook on the project's notifications page and sees
its secret once; an edited fork waiting for approval is delivered to it, the delivery log shows the receiver's
error, and Redeliver sends it again; a member chooses their emails and the choice stays. Every page fits a
phone's width and shows a URL carrying markup as text."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from graphs.models import WebhookDelivery, WorkGraphRun
from tests.browser.conftest import (
    ARTIFACTS,
    PAGE_WAIT_MS,
    build_and_check_finished,
    console_served,
    no_sideways_scroll,
    sign_in,
)
from tests.webhook_receiver import webhook_receiver

pytestmark = pytest.mark.django_db(transaction=True)

MARKUP = "<script>alert(1)</script>"


def delivery_settled(*, attempts_done: int, timeout: float = 30.0) -> WebhookDelivery:
    """Wait for the one delivery to be recorded past pending after its ``attempts_done``-th try; return it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        delivery = WebhookDelivery.objects.first()
        if delivery is not None and delivery.status != "pending" and delivery.attempts >= attempts_done:
            return delivery
        time.sleep(0.1)
    raise AssertionError(f"no delivery settled: {list(WebhookDelivery.objects.values('status', 'attempts'))}")


@pytest.fixture
def finished(task):
    """A finished run of a project whose plans need approval, so an edited fork of it waits."""
    task.project.require_plan_approval = True
    task.project.save(update_fields=["require_plan_approval"])
    return build_and_check_finished(task)


@pytest.fixture
def receiver():
    with webhook_receiver() as receiving:
        receiving.script.append(500)  # the first try fails; the redelivery gets the default 200
        yield receiving


@pytest.fixture
def served(transactional_db):
    """The console, allowed to deliver to the local receiver, giving up on a delivery after one failed try."""
    with console_served(WORKGRAPH_WEBHOOK_ALLOW_PRIVATE="1", WORKGRAPH_WEBHOOK_RETRY_SECONDS="0") as url:
        yield url


def test_a_lead_registers_a_webhook_reads_its_deliveries_and_redelivers(chromium, served, receiver, alice, finished):
    project = finished.task.project
    hook_url = f"{receiver.url}&tag={MARKUP}"
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    page.on("dialog", lambda dialog: pytest.fail(f"a dialog opened: {dialog.message}"))
    sign_in(page, f"{served}/projects/{project.slug}/notifications/", "alice")

    form = page.locator("#webhook-add")
    form.locator("input[name=url]").fill(hook_url)
    form.locator("input[name=events][value='approval.waiting']").check()
    form.locator("button[type=submit]").click()

    secret = page.locator("#webhook-secret")
    expect(secret).to_contain_text("whsec_")
    hook = project.webhooks.get()
    assert hook.secret in secret.inner_text() and hook.url == hook_url
    listed = page.locator("#webhook-list a")
    expect(listed).to_have_text(hook_url)
    assert page.locator("#webhooks script").count() == 0
    page.screenshot(path=str(ARTIFACTS / "notifications-webhook-added.png"), full_page=True)
    no_sideways_scroll(page)

    page.reload()
    expect(page.locator("#webhook-list a")).to_have_text(hook_url)
    assert page.locator("#webhook-secret").count() == 0 and hook.secret not in page.content()
    assert project.webhooks.count() == 1

    page.goto(f"{served}/runs/{finished.run_id}/fork/edit/?node=check")
    page.locator("textarea[name=prompt]").fill("Check the CSV export only.")
    page.locator("#fork-edit-form button[type=submit]").click()
    page.wait_for_url(lambda url: "/fork/" not in url)
    fork = WorkGraphRun.objects.get(forked_from=finished)
    assert fork.status == "awaiting_approval"

    first = receiver.wait_for(1, timeout=PAGE_WAIT_MS / 1000)[0]
    payload = json.loads(first.body)
    assert (payload["version"], payload["type"], payload["data"]["facts"]) == (1, "approval.waiting", {})
    assert payload["data"]["run"]["id"] == str(fork.pk) and payload["data"]["run"]["status"] == "awaiting_approval"
    delivery = delivery_settled(attempts_done=1)
    assert (delivery.event, delivery.status, delivery.response_code) == ("approval.waiting", "failed", 500)
    page.goto(f"{served}/projects/{project.slug}/notifications/")
    page.locator("#webhook-list a").click()
    row = page.locator(f"tr[data-delivery='{delivery.message_id}']")
    expect(row.locator("td").first).to_have_text("approval.waiting")
    expect(row.locator(".delivery-status")).to_contain_text("Failed")
    expect(row.locator("td").nth(4)).to_contain_text("500")
    expect(page.locator("h1 + p code")).to_have_text(hook_url)
    assert page.locator("main script, .card script").count() == 0
    no_sideways_scroll(page)

    row.get_by_role("button", name="Redeliver").click()
    expect(page.get_by_text(f"{delivery.message_id} is sent again.")).to_be_visible()
    second = receiver.wait_for(2, timeout=PAGE_WAIT_MS / 1000)[1]
    assert second.headers["webhook-id"] == first.headers["webhook-id"] == delivery.message_id
    assert second.body == first.body
    delivery_settled(attempts_done=1)
    page.reload()
    row = page.locator(f"tr[data-delivery='{delivery.message_id}']")
    expect(row.locator(".delivery-status")).to_contain_text("Delivered")
    expect(row.locator("td").nth(4)).to_contain_text("200")
    page.screenshot(path=str(ARTIFACTS / "notifications-deliveries.png"), full_page=True)
    no_sideways_scroll(page)


def test_a_member_chooses_email_notifications_and_the_choice_stays(chromium, console_server, project, bob):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/projects/{project.slug}/notifications/", "bob")
    assert page.locator("#webhooks").count() == 0

    section = page.locator("#email-notifications")
    for event in ("run.failed", "approval.waiting"):
        section.locator(f"input[name=events][value='{event}']").check()
    section.locator("button[type=submit]").click()
    expect(page.get_by_text("Your email notifications are saved.")).to_be_visible()
    no_sideways_scroll(page)

    page.goto(f"{console_server}/projects/{project.slug}/notifications/")
    checked = page.locator("#email-notifications input[name=events]:checked")
    expect(checked).to_have_count(2)
    assert sorted(checked.evaluate_all("(boxes) => boxes.map((box) => box.value)")) == [
        "approval.waiting", "run.failed"]
    assert bob.email_subscriptions.get().events == ["run.failed", "approval.waiting"]
