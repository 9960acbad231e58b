"""In a real browser: a skill admin edits a skill, sees the template warning live, and diffs two revisions."""

from __future__ import annotations

import pytest

from graphs.models import Skill
from graphs.skills.revisions import skill_save
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in

BROKEN_BODY = '# Finance research\n\nRead the filings twice.\n\n```team-template\n{"version": 1, "nodes": [\n```\n'


@pytest.fixture
def skill(dana) -> Skill:
    skill = Skill(skill_id="finance-research", name="Finance research", owner_org_node="planner")
    skill_save(skill=skill, body="# Finance research\n\nRead the filings.\n", author=dana, note="first draft")
    return skill


@pytest.mark.django_db(transaction=True)
def test_an_admin_edits_a_skill_sees_the_template_warning_and_diffs_two_revisions(chromium, live_server, dana, skill):
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{live_server.url}/login/?next=/skills/{skill.skill_id}/edit/", "dana")

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


UNKNOWN_TOOL_BODY = (
    '# Finance research\n\n```beaver-team-template\n{"version": 1, "nodes": [{"node_id": "collect", '
    '"task": "Collect the filings", "requested_tools": ["web_fecth"]}]}\n```\n'
)


@pytest.mark.django_db(transaction=True)
def test_the_editor_explains_templates_and_flags_an_unknown_tool_as_it_is_typed(chromium, live_server, dana, skill):
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{live_server.url}/login/?next=/skills/{skill.skill_id}/edit/", "dana")
    page.wait_for_url(f"**/skills/{skill.skill_id}/edit/")

    page.click("#template-help summary")
    guide = page.locator("#template-help")
    assert guide.locator("dt:has-text('requested_tools')").is_visible()
    assert "web_fetch" in guide.inner_text() and '"version": 1' in guide.locator("pre").inner_text()

    page.fill("textarea[name=body]", UNKNOWN_TOOL_BODY)
    warning = page.locator("#template-warnings li").first
    warning.wait_for(state="visible")
    assert warning.inner_text() == (
        "template node 'collect': tool 'web_fecth' is not in the tool registry; planning removes it"
    )
    page.screenshot(path=str(ARTIFACTS / "skill-editor-guide.png"), full_page=True)


@pytest.mark.django_db(transaction=True)
def test_a_bad_diff_link_is_the_consoles_page_offering_the_revisions(chromium, live_server, dana, skill):
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{live_server.url}/login/?next=/skills/{skill.skill_id}/diff/?old=1%26new=7", "dana")
    page.wait_for_selector("#diff-problem")
    assert "no such pair of revisions" in page.locator("#diff-problem").inner_text()
    assert page.locator("header.topbar").is_visible(), "the console's own page, not a bare error"
    assert page.locator("select[name=old] option").count() == 1
