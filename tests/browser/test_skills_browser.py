"""In a real browser: a skill admin edits a skill, sees the template warning live, and diffs two revisions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphs.models import Skill
from graphs.skills import skill_save

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
BROKEN_BODY = '# Finance research\n\nRead the filings twice.\n\n```team-template\n{"version": 1, "nodes": [\n```\n'


def _browser_or_skip():
    """Playwright's sync API and Debian's Chromium; under CI=true a missing piece fails the test."""
    in_ci = os.environ.get("CI", "").lower() == "true"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if in_ci:
            pytest.fail("playwright is not installed (pip install playwright)")
        pytest.skip("playwright is not installed (pip install playwright)")
    if not CHROMIUM.exists():
        if in_ci:
            pytest.fail(f"Chromium is missing at {CHROMIUM} (apt-get install -y chromium)")
        pytest.skip(f"Chromium is missing at {CHROMIUM} (apt-get install -y chromium)")
    return sync_playwright


@pytest.fixture
def skill(dana) -> Skill:
    skill = Skill(skill_id="finance-research", name="Finance research", owner_org_node="planner")
    skill_save(skill=skill, body="# Finance research\n\nRead the filings.\n", author=dana, note="first draft")
    return skill


@pytest.mark.django_db(transaction=True)
def test_an_admin_edits_a_skill_sees_the_template_warning_and_diffs_two_revisions(live_server, dana, skill):
    sync_playwright = _browser_or_skip()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(15_000)
            page.goto(f"{live_server.url}/login/?next=/skills/{skill.skill_id}/edit/")
            page.fill("input[name=username]", "dana")
            page.fill("input[name=password]", "correct horse battery staple")
            page.click("button[type=submit]")

            page.wait_for_url(f"**/skills/{skill.skill_id}/edit/")
            page.fill("textarea[name=body]", BROKEN_BODY)
            warning = page.locator("#template-warnings li").first
            warning.wait_for(state="visible")
            assert warning.inner_text().startswith("the team template is not valid JSON")
            assert "Read the filings twice." in page.locator("#skill-preview").inner_text()
            page.screenshot(path=str(ARTIFACTS / "skill-editor-warning.png"), full_page=True)

            page.fill("input[name=note]", "read twice")
            page.click("#save-skill")
            page.wait_for_url(f"**/skills/{skill.skill_id}/")
            assert "Saved as revision 2." in page.locator(".messages").inner_text()
            assert "not valid JSON" in page.locator(".template-panel #template-warnings").inner_text()
            page.screenshot(path=str(ARTIFACTS / "skill-detail.png"), full_page=True)

            page.click("#compare")
            page.wait_for_url("**/diff/?*")
            assert page.locator("h1").inner_text() == "Revision 1 → revision 2"
            removed = page.locator(".diff-del").all_inner_texts()
            added = page.locator(".diff-add").all_inner_texts()
            assert "-Read the filings." in removed
            assert "+Read the filings twice." in added
            assert "+```team-template" in added
            page.screenshot(path=str(ARTIFACTS / "skill-revision-diff.png"), full_page=True)
        finally:
            browser.close()
