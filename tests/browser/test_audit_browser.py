"""In a real browser against daphne: a lead's failed sign-in, then a sign-in and a role change, are on the
project's audit log (the sign-in on the whole log); the lead filters it, and the
page shows a hostile name as text and fits a phone's width. An administrator exports the whole log."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from graphs.audit import audit_record
from graphs.models import AuditEntry
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, no_sideways_scroll, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

MARKUP = "<img src=x onerror=alert(1)>"


def test_a_lead_reads_and_filters_the_projects_log_and_an_administrator_exports_it(chromium, console_server,
                                                                                     project, alice, bob):
    audit_record(actor=alice, action=AuditEntry.Action.PROJECT_EDITED, object_type="project", object_id=project.slug,
                 project=project, before={"name": "Old"}, after={"name": MARKUP}, summary=f"Renamed to {MARKUP}")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    page.on("dialog", lambda dialog: pytest.fail(f"a dialog opened: {dialog.message}"))
    page.goto(f"{console_server}/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "not her password")
    page.click("button[type=submit]")
    sign_in(page, f"{console_server}/projects/{project.slug}/members/", "alice")
    page.locator("form[action$='/members/bob/'] select[name=role]").select_option("viewer")
    page.locator("form[action$='/members/bob/'] button[value=role]").click()

    page.goto(f"{console_server}/projects/{project.slug}/")
    page.locator("#project-audit-link").click()
    rows = page.locator("tr[data-audit-entry]")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("changed a member's role")
    expect(rows.first).to_contain_text("reviewer → viewer")
    expect(rows.nth(1)).to_contain_text(f"Renamed to {MARKUP}")
    assert page.locator("main img").count() == 0
    page.screenshot(path=str(ARTIFACTS / "audit-project.png"), full_page=True)
    no_sideways_scroll(page)

    page.locator("select[name=action]").select_option("member")
    page.locator("input[name=actor]").fill("alice")
    page.locator("input[name=actor]").press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("member.role_changed")

    admin = factories.UserFactory(username="root", is_staff=True)
    admin_page = chromium.new_page(viewport={"width": 1280, "height": 900})
    sign_in(admin_page, f"{console_server}/login/", admin.username)
    admin_page.locator("#nav-audit").click()
    expect(admin_page.locator("tr[data-audit-entry]").first).to_contain_text("changed a member's role")
    expect(admin_page.locator("tr[data-audit-entry]", has_text="failed to sign in")).to_contain_text("alice")
    with admin_page.expect_download() as download:
        admin_page.locator("#audit-export").click()
    lines = [json.loads(line) for line in open(download.value.path()).read().splitlines()]
    assert [line["action"] for line in lines] == ["project.edited", "sign_in.failed", "member.role_changed"]
    no_sideways_scroll(admin_page)
