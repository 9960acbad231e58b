"""Saving a skill keeps revisions and re-parses its template; its status moves only along allowed paths."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.errors import InvalidTransitionError, WorkGraphError
from graphs.models import Skill
from graphs.skills.revisions import skill_save
from graphs.skills.statuses import skill_status_change, skill_status_history
from tests import factories

pytestmark = pytest.mark.django_db

TEMPLATE_BODY = '# Skill\n\n```team-template\n{"version": 1, "nodes": [{"node_id": "a", "task": "Do A"}]}\n```\n'


def test_the_first_save_creates_revision_one_and_parses_the_template(dana):
    skill = Skill(skill_id="research")
    revision = skill_save(skill=skill, body=TEMPLATE_BODY, author=dana, note="first")
    assert (revision.number, revision.author, revision.note, revision.body) == (1, dana, "first", TEMPLATE_BODY)
    skill.refresh_from_db()
    assert skill.team_template == {"version": 1, "nodes": [{"node_id": "a", "task": "Do A"}]}
    assert skill.template_warnings == []


def test_a_save_that_changes_nothing_creates_no_revision(dana):
    skill = Skill(skill_id="research", name="Research")
    skill_save(skill=skill, body=TEMPLATE_BODY, author=dana)
    assert skill_save(skill=skill, body=TEMPLATE_BODY.replace("\n", "\r\n"), author=dana) is None
    assert skill.revisions.count() == 1


@pytest.mark.parametrize(("field", "value"), [("name", "Research"), ("description", "Reads filings."),
                                              ("owner_org_node", "planner")])
def test_a_change_of_any_field_with_the_same_body_creates_the_next_revision_holding_it(dana, field, value):
    skill = Skill(skill_id="research")
    skill_save(skill=skill, body=TEMPLATE_BODY, author=dana)
    setattr(skill, field, value)
    revision = skill_save(skill=skill, body=TEMPLATE_BODY, author=dana)
    assert (revision.number, getattr(revision, field)) == (2, value)
    assert getattr(Skill.objects.get(pk=skill.pk), field) == value


def test_a_changed_body_creates_the_next_revision_and_replaces_the_template(dana):
    skill = Skill(skill_id="research")
    skill_save(skill=skill, body=TEMPLATE_BODY, author=dana)
    revision = skill_save(skill=skill, body=TEMPLATE_BODY.replace('"nodes"', '"nodez"'), author=dana)
    assert revision.number == 2
    skill.refresh_from_db()
    assert skill.team_template is None
    assert skill.template_warnings == ['the team template needs a non-empty "nodes" list']


def test_a_skill_created_without_revisions_gets_one_on_its_first_save(dana):
    skill = factories.SkillFactory()
    assert skill_save(skill=skill, body=skill.body, author=dana).number == 1


@pytest.mark.parametrize(
    ("path", "final"),
    [(["active"], "active"), (["active", "deprecated"], "deprecated"), (["active", "deprecated", "active"], "active")],
)
def test_allowed_transitions_record_the_reason_and_who(dana, path, final):
    skill = factories.SkillFactory()
    for status in path:
        skill = skill_status_change(skill=skill, status=status, reason=f"now {status}", by=dana)
    assert skill.status == final
    assert skill.status_reason == f"now {final}"
    latest = skill_status_history(skill).first()
    assert latest.user == dana
    assert latest.get_change_message().endswith(f"→ {final}: now {final}")


@pytest.mark.parametrize(("start", "target"), [("draft", "deprecated"), ("active", "draft"), ("deprecated", "draft")])
def test_other_transitions_are_refused_naming_both_states(dana, start, target):
    skill = factories.SkillFactory(status=start)
    with pytest.raises(InvalidTransitionError) as refused:
        skill_status_change(skill=skill, status=target, reason="because", by=dana)
    assert f"'{start}'" in str(refused.value) and f"'{target}'" in str(refused.value)
    assert Skill.objects.get(pk=skill.pk).status == start


def test_a_status_change_needs_a_reason(dana):
    skill = factories.SkillFactory()
    with pytest.raises(WorkGraphError, match="say why"):
        skill_status_change(skill=skill, status="active", reason="  ", by=dana)


def test_an_edit_in_the_django_admin_keeps_a_revision_and_reparses_the_template(db):
    admin = factories.UserFactory(username="root", is_staff=True, is_superuser=True)
    skill = factories.SkillFactory(skill_id="admin-edited")
    client = Client()
    client.force_login(admin)
    response = client.post(
        f"/admin/graphs/skill/{skill.pk}/change/",
        {"skill_id": skill.skill_id, "name": "Edited", "description": "", "owner_org_node": "coder",
         "file_path": "", "current_git_commit_sha": "", "source": "console", "body": TEMPLATE_BODY,
         "defect_note": "", "revisions-TOTAL_FORMS": "0", "revisions-INITIAL_FORMS": "0"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    skill.refresh_from_db()
    assert skill.name == "Edited"
    assert skill.team_template is not None
    [revision] = skill.revisions.all()
    assert (revision.author, revision.note) == (admin, "edited in the Django admin")


def test_saving_a_copy_loaded_before_a_status_change_does_not_undo_it(dana):
    skill = factories.SkillFactory()
    stale = Skill.objects.get(pk=skill.pk)
    skill_status_change(skill=skill, status="active", reason="ready", by=dana)
    skill_save(skill=stale, body="# New body\n", author=dana)
    assert Skill.objects.get(pk=skill.pk).status == "active"
