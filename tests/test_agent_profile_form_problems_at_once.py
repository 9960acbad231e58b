"""The agent profile editor names every problem of a save at once — each on its field — and saves nothing:
a field refused never hides another's problem. (Profiles have no API: the page is their only editor.)"""

from __future__ import annotations

import html
import re

import pytest

from graphs.models import AgentProfile
from graphs.profiles.resolve import profile_console
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


def page_problems(response) -> dict[str, str]:
    return {name: html.unescape(message)
            for name, message in re.findall(r'<p class="error" id="error-([a-z_]+)">(.*?)</p>', response.text, re.S)}


def test_a_new_profile_with_five_wrong_fields_names_all_five(dana):
    profile_console("coder")

    page = signed_in(dana).post("/agents/new/", {
        "org_node": "no spaces", "description": "", "instructions": "You review.", "model": "-rm",
        "effort": "enormous", "permission_mode": "ask-everyone", "max_turns": "0",
        "allowed_tools_text": "Read, (not a rule)", "disallowed_tools_text": "", "note": ""})

    assert page.status_code == 400
    assert set(page_problems(page)) == {"org_node", "model", "effort", "permission_mode", "max_turns",
                                        "allowed_tools_text"}
    assert page_problems(page)["model"].startswith("A model name is letters, digits")
    assert page_problems(page)["allowed_tools_text"].startswith("Not a tool rule: (not a rule).")
    assert not AgentProfile.objects.filter(org_node="no spaces").exists()


def test_an_edit_names_each_wrong_field_and_keeps_the_profile(dana):
    coder = profile_console("coder")
    before = (coder.model, coder.max_turns)

    page = signed_in(dana).post("/agents/coder/edit/", {
        "description": coder.description, "instructions": coder.instructions, "model": "--bad",
        "effort": "", "permission_mode": "nope", "max_turns": "-3", "allowed_tools_text": "",
        "disallowed_tools_text": "Bash(", "note": "",
        "base_revision": coder.revisions.order_by("-number").first().number})

    assert page.status_code == 400
    assert set(page_problems(page)) == {"model", "permission_mode", "max_turns", "disallowed_tools_text"}
    coder.refresh_from_db()
    assert (coder.model, coder.max_turns) == before
