"""In a real browser: two tabs edit one skill's description; the second to save sees the conflict with both
versions, its own text still in the form, and nothing of the first tab's edit is lost."""

from __future__ import annotations

import pytest

from graphs.models import Skill
from graphs.skills.revisions import skill_save
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def skill(dana) -> Skill:
    skill = Skill(skill_id="research", name="Research", description="Reads filings.", owner_org_node="planner")
    skill_save(skill=skill, body="# Research\n\nRead the filings.\n", author=dana, note="first")
    return skill


def test_the_second_tab_to_save_sees_both_versions_and_keeps_its_text(chromium, console_server, dana, skill):
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    first = context.new_page()
    first.set_default_timeout(PAGE_WAIT_MS)
    sign_in(first, f"{console_server}/login/?next=/skills/research/edit/", "dana")
    first.wait_for_url("**/skills/research/edit/")
    second = context.new_page()
    second.set_default_timeout(PAGE_WAIT_MS)
    second.goto(f"{console_server}/skills/research/edit/")

    first.fill("textarea[name=description]", "Reads filings, theirs.")
    first.click("#save-skill")
    first.wait_for_url("**/skills/research/")
    second.fill("textarea[name=description]", "Reads filings, mine.")
    second.click("#save-skill")

    conflict = second.locator("#revision-conflict")
    conflict.wait_for()
    field = conflict.locator('[data-field="Description"]')
    assert field.locator('[data-version="theirs"]').inner_text() == "Reads filings, theirs."
    assert field.locator('[data-version="yours"]').inner_text() == "Reads filings, mine."
    assert second.input_value("textarea[name=description]") == "Reads filings, mine."
    assert Skill.objects.get(pk=skill.pk).description == "Reads filings, theirs."
    second.screenshot(path=str(ARTIFACTS / "skill-edit-conflict.png"), full_page=True)
    context.close()
