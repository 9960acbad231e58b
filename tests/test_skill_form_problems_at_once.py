"""The skill editor names every problem of a save at once — each on its field — and saves nothing: a field
refused never hides another's problem. (Skills have no API: the page is their only editor.)"""

from __future__ import annotations

import html
import re

import pytest

from graphs.models import Skill
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


def page_problems(response) -> dict[str, str]:
    return {name: html.unescape(message)
            for name, message in re.findall(r'<p class="error" id="error-([a-z_]+)">(.*?)</p>', response.text, re.S)}


def test_a_new_skill_with_four_wrong_fields_names_all_four(dana):
    page = signed_in(dana).post("/skills/new/", {
        "skill_id": "not a slug", "name": "n" * 201, "description": "", "owner_org_node": "o" * 101,
        "body": "", "note": "x" * 2001})

    assert page.status_code == 400
    assert set(page_problems(page)) == {"skill_id", "name", "owner_org_node", "note"}
    assert not Skill.objects.exists()


def test_a_reserved_id_is_named_beside_the_other_problems(dana):
    page = signed_in(dana).post("/skills/new/", {
        "skill_id": "new", "name": "n" * 201, "description": "", "owner_org_node": "", "body": "", "note": ""})

    assert page_problems(page) == {"skill_id": "'new' is reserved; choose another id.",
                                   "name": "Ensure this value has at most 200 characters (it has 201)."}
    assert not Skill.objects.exists()
