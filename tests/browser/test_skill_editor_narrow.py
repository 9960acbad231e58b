"""In a real browser: the skill editor fits a 390 px phone, light and dark — its fields, the body, the
preview, the team template with its warnings and the field guide — with nothing scrolling sideways."""

from __future__ import annotations

import pytest

from graphs.demo import demo_data_load
from tests.browser.conftest import ARTIFACTS, OVERFLOW, PAGE_WAIT_MS, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"
LONG_LINE_BODY = (
    "# Sourced research\n\nA-very-long-unbroken-identifier-that-would-push-the-page-sideways-on-a-phone-screen.\n\n"
    '```team-template\n{"version": 1, "nodes": [{"node_id": "collect_every_official_figure_with_its_source_url", '
    '"task": "Collect", "requested_tools": ["web_fecth_a_tool_name_nobody_registered_in_the_registry"]}]}\n```\n'
)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_skill_editor_fits_a_phone_without_sideways_scroll(chromium, console_server, scheme):
    login, _ = demo_data_load(password=PASSWORD)
    page = chromium.new_page(viewport={"width": 390, "height": 844}, color_scheme=scheme)
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/login/?next=/skills/sourced-research/edit/", login.username)
    page.wait_for_url("**/skills/sourced-research/edit/")
    page.wait_for_load_state("networkidle")
    page.click("#template-help summary")
    assert page.evaluate(OVERFLOW) == {"scroll": 0, "wide": []}

    page.fill("textarea[name=body]", LONG_LINE_BODY)
    page.locator("#template-warnings li").first.wait_for(state="visible")
    assert page.locator("#template-summary").inner_text() == (
        "1 note: planning uses the template and leaves out what it names."
    )
    page.screenshot(path=str(ARTIFACTS / f"skill-editor-390-{scheme}.png"), full_page=True)
    assert page.evaluate(OVERFLOW) == {"scroll": 0, "wide": []}

    page.fill("input[name=note]", "a long line")
    page.click("#save-skill")
    page.wait_for_url("**/skills/sourced-research/")
    assert page.evaluate(OVERFLOW)["scroll"] == 0, "the skill's page fits too"
