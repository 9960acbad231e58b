"""In a real browser: a skill admin opens the agents, edits the coder's profile (its permission mode, tools and
instructions, previewed sanitized), saves it and reads the diff of its two revisions."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in

INSTRUCTIONS = "# Coder\n\nWrite the change and **run the tests**.\n\n<script>window.injected = true</script>\n"


@pytest.mark.django_db(transaction=True)
def test_an_admin_edits_a_profile_previews_it_and_reads_the_diff(chromium, live_server, dana):
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{live_server.url}/login/?next=/agents/", "dana")

    page.wait_for_url("**/agents/")
    page.click("a[href='/agents/coder/']")
    page.wait_for_url("**/agents/coder/")
    page.click("#edit-profile")
    page.wait_for_url("**/agents/coder/edit/")

    page.select_option("select[name=permission_mode]", "acceptEdits")
    page.fill("input[name=model]", "claude-sonnet-4-5")
    page.fill("textarea[name=allowed_tools_text]", "Read, Write, Bash(pytest:*)")
    page.fill("textarea[name=instructions]", INSTRUCTIONS)
    page.click("#preview-profile")
    page.locator("#profile-preview strong").wait_for(state="visible")
    assert page.locator("#profile-preview strong").inner_text() == "run the tests"
    assert page.locator("#profile-preview script").count() == 0
    assert page.evaluate("window.injected === undefined")

    page.fill("input[name=note]", "run the tests, edits only")
    page.click("#save-profile")
    page.wait_for_url("**/agents/coder/")
    assert "Saved as revision 2." in page.locator(".messages").inner_text()
    assert page.locator("#instructions script").count() == 0
    assert page.evaluate("window.injected === undefined")
    page.screenshot(path=str(ARTIFACTS / "agent-profile-detail.png"), full_page=True)

    page.click("#compare")
    page.wait_for_url("**/diff/?*")
    assert page.locator("h1").inner_text() == "Revision 1 → revision 2"
    removed = page.locator(".diff-del").all_inner_texts()
    added = page.locator(".diff-add").all_inner_texts()
    assert "-permission mode: dontAsk" in removed
    assert "+permission mode: acceptEdits" in added
    assert "+model: claude-sonnet-4-5" in added
    assert "+allowed tools: Read, Write, Bash(pytest:*)" in added
    assert "+<script>window.injected = true</script>" in added
    assert page.evaluate("window.injected === undefined")
    page.screenshot(path=str(ARTIFACTS / "agent-profile-diff.png"), full_page=True)
