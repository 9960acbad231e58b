"""The skills and agent profiles API: every member reads each record with its revisions and labels; skill
admins add revisions, refused with a 409 conflict over a newer one and a 400 naming each wrong field."""

from __future__ import annotations

import json

import pytest

from graphs.models import AuditEntry, Skill, SkillRevision
from graphs.profiles.resolve import profile_console
from graphs.profiles.revisions import profile_label_move
from graphs.skills.revisions import skill_label_move, skill_save
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def skill(dana) -> Skill:
    skill = Skill(skill_id="research", name="Research", status=Skill.Status.ACTIVE)
    skill_save(skill=skill, body="# Research, first", author=dana)
    skill_save(skill=skill, body="# Research, second", author=dana, note="sharper")
    return skill


def post(client, url: str, body: dict):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def test_a_member_reads_skills_with_their_revisions_and_labels(skill, dana, bob):
    skill_label_move(skill=skill, label="production", number=1, by=dana)
    client = signed_in(bob)

    listed = client.get("/api/skills").json()
    detail = client.get("/api/skills/research").json()

    assert [(item["skill_id"], item["latest_revision"], item["labels"], item["run_revision"]) for item in listed] == [
        ("research", 2, {"production": 1}, 1)]
    assert [(item["number"], item["body"], item["labels"]) for item in detail["revisions"]] == [
        (2, "# Research, second", []), (1, "# Research, first", ["production"])]
    assert detail["revisions"][0]["note"] == "sharper" and detail["revisions"][0]["author"] == "dana"


def test_who_reads_and_who_writes(skill, bob, charlie, dana, client):
    assert signed_in(charlie).get("/api/skills").status_code == 403  # a member of no project
    assert signed_in(dana).get("/api/agent-profiles").status_code == 200  # a skill admin of none
    assert client.get("/api/skills").status_code == 401
    refused = post(signed_in(bob), "/api/skills/research/revisions", {"body": "# Mine", "base_revision": 2})
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    assert signed_in(bob).get("/api/skills/nope").status_code == 404


def test_a_skill_admin_adds_a_revision_and_a_stale_one_is_a_conflict(skill, dana):
    client = signed_in(dana)

    made = post(client, "/api/skills/research/revisions", {"body": "# Research, third", "base_revision": 2,
                                                           "note": "tighter"})
    same = post(client, "/api/skills/research/revisions", {"body": "# Research, third", "base_revision": 3})
    stale = post(client, "/api/skills/research/revisions", {"body": "# Research, mine", "base_revision": 2})

    assert made.status_code == 201 and (made.json()["number"], made.json()["note"]) == (3, "tighter")
    assert same.status_code == 200 and same.json()["number"] == 3  # nothing changed: no revision made
    assert (stale.status_code, stale.json()["code"]) == (409, "conflict")
    fields = {item["field"]: item for item in stale.json()["fields"]}
    assert fields["base_revision"]["latest"] == 3 and fields["body"]["theirs"] == "# Research, third"
    assert list(SkillRevision.objects.filter(skill=skill).values_list("number", flat=True)) == [1, 2, 3]
    assert AuditEntry.objects.filter(action="skill.edited").latest("id").summary == (
        "Edited the skill research (revision 3): tighter")


def test_a_skill_revision_names_each_wrong_field(skill, dana):
    answer = post(signed_in(dana), "/api/skills/research/revisions",
                  {"body": "# ok", "base_revision": 2, "name": "n" * 201, "note": "x" * 2001})

    assert answer.status_code == 400 and answer.json()["code"] == "invalid_revision"
    assert {item["field"] for item in answer.json()["fields"]} == {"name", "note"}
    assert skill.revisions.count() == 2


def test_a_member_reads_the_consoles_profiles_and_their_revisions(dana, bob):
    coder = profile_console("coder")
    profile_label_move(profile=coder, label="staging", number=1, by=dana)
    client = signed_in(bob)

    listed = {item["org_node"]: item for item in client.get("/api/agent-profiles").json()}
    detail = client.get("/api/agent-profiles/coder").json()

    assert {"planner", "coder", "validator"} <= set(listed)
    assert listed["coder"]["labels"] == {"staging": 1} and listed["coder"]["run_revision"] == 1
    revision = detail["revisions"][0]
    assert (revision["number"], revision["labels"], revision["permission_mode"]) == (1, ["staging"], "dontAsk")
    assert revision["instructions"] == coder.instructions and "Read" in revision["allowed_tools"]
    assert client.get("/api/agent-profiles/nobody").status_code == 404


def test_a_skill_admin_changes_a_profiles_fields_on_the_revision_it_read(dana):
    client = signed_in(dana)

    made = post(client, "/api/agent-profiles/coder/revisions", {
        "base_revision": 1, "model": "claude-sonnet-4-5", "max_turns": 12,
        "allowed_tools": ["Read", "Bash(git diff:*, git log:*)"], "note": "a model of its own"})
    stale = post(client, "/api/agent-profiles/coder/revisions", {"base_revision": 1, "effort": "high"})

    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["number"], body["model"], body["max_turns"]) == (2, "claude-sonnet-4-5", 12)
    assert body["allowed_tools"] == ["Read", "Bash(git diff:*, git log:*)"]
    assert body["instructions"] == profile_console("coder").revisions.get(number=1).instructions
    assert stale.status_code == 409 and stale.json()["fields"][0]["field"] == "base_revision"


def test_a_profile_revision_names_each_wrong_field_at_once(dana):
    answer = post(signed_in(dana), "/api/agent-profiles/coder/revisions", {
        "base_revision": 1, "permission_mode": "always", "model": "-rf", "max_turns": 0,
        "disallowed_tools": ["Bash(", "Write"]})

    assert answer.status_code == 400
    assert {item["field"] for item in answer.json()["fields"]} == {"permission_mode", "model", "max_turns",
                                                                   "disallowed_tools"}
    assert profile_console("coder").revisions.count() == 1
