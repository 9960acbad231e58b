"""The skill and agent profile pages show the labels each revision carries, and which revision runs use."""

from __future__ import annotations

import re

import pytest

from graphs.models import Skill
from graphs.profiles.resolve import profile_console
from graphs.profiles.revisions import profile_label_move, profile_save
from graphs.skills.revisions import skill_label_move, skill_save
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

def labels_by_revision(page: str) -> dict[str, list[str]]:
    rows = re.findall(r'<td>(?:<a href="[^"]*">)?r(\d+)(?:</a>)?(.*?)</td>', page, re.S)
    return {number: re.findall(r'data-label="(\w+)"', rest) for number, rest in rows}


def test_the_skill_page_names_the_revision_runs_use_and_each_label(dana):
    skill = Skill(skill_id="research", status=Skill.Status.ACTIVE)
    for body in ("# One", "# Two", "# Three"):
        skill_save(skill=skill, body=body, author=dana)
    client = signed_in(dana)
    before = client.get("/skills/research/").content.decode()

    skill_label_move(skill=skill, label="production", number=2, by=dana)
    skill_label_move(skill=skill, label="staging", number=3, by=dana)
    after = client.get("/skills/research/").content.decode()

    assert "Runs of tasks use revision 3, the newest: no revision is labelled production." in before
    assert "Runs of tasks use revision 2, labelled production." in after
    assert labels_by_revision(after) == {"3": ["staging"], "2": ["production"], "1": []}


def test_the_profile_page_shows_its_labels_too(dana):
    coder = profile_console("coder")
    coder.instructions = "Second."
    profile_save(profile=coder, author=dana)
    profile_label_move(profile=coder, label="production", number=1, by=dana)

    page = signed_in(dana).get("/agents/coder/").content.decode()

    assert 'data-run-revision="1"' in page and "labelled production" in page
    assert labels_by_revision(page) == {"2": [], "1": ["production"]}
