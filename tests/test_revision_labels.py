"""Revisions you can name: a skill's or an agent profile's revision carries the label production or staging
(one revision each), runs use the production one (the newest where none is labelled), a revision is
pinned by number or label, and every label move lands in the audit log."""

from __future__ import annotations

import json

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from graphs.domain.revisions import RevisionUnknown
from graphs.models import AgentProfile, AuditEntry, Skill, SkillLabel
from graphs.planning.template_planning import template_guide_for
from graphs.profiles.resolve import profile_console, profile_override_create, profile_resolve
from graphs.profiles.revisions import profile_label_move, profile_save
from graphs.revisions import revision_for_runs, revision_labels, revision_pinned
from graphs.skills.revisions import skill_label_move, skill_save
from tests import factories

pytestmark = pytest.mark.django_db


def template_body(node_id: str) -> str:
    template = {"version": 1, "nodes": [{"node_id": node_id, "task": f"Do {node_id}."}]}
    return f"# Research\n\n```team-template\n{json.dumps(template)}\n```\n"


@pytest.fixture
def skill(dana) -> Skill:
    """A skill with three revisions, each planning a team of one node: first, second, third."""
    skill = Skill(skill_id="research", status=Skill.Status.ACTIVE)
    for node_id in ("first", "second", "third"):
        skill_save(skill=skill, body=template_body(node_id), author=dana)
    return skill


@pytest.fixture
def coder(dana) -> AgentProfile:
    """The console's coder profile with a second revision: new instructions."""
    profile = profile_console("coder")
    profile.instructions = "You are the coder, second revision."
    profile_save(profile=profile, author=dana)
    return profile


def test_runs_use_the_newest_revision_until_one_is_labelled_production(skill, dana):
    assert revision_for_runs(skill).number == 3
    assert template_guide_for(skill=skill).skill_revision == 3

    before = skill_label_move(skill=skill, label="production", number=1, by=dana)

    guide = template_guide_for(skill=skill)
    assert before is None and revision_for_runs(skill).number == 1
    assert (guide.skill_revision, guide.template["nodes"][0]["node_id"]) == (1, "first")


def test_a_label_moves_from_one_revision_to_another_and_each_label_is_held_once(skill, dana):
    skill_label_move(skill=skill, label="production", number=1, by=dana)
    skill_label_move(skill=skill, label="staging", number=3, by=dana)

    moved_from = skill_label_move(skill=skill, label="production", number=3, by=dana)

    assert moved_from == 1
    assert revision_labels(skill) == {3: ["production", "staging"]}
    with pytest.raises(IntegrityError), transaction.atomic():
        SkillLabel.objects.create(skill=skill, label="production", revision=skill.revisions.get(number=2),
                                  moved_at=skill.updated_at)


def test_a_revision_is_pinned_by_number_or_label(skill, dana):
    skill_label_move(skill=skill, label="staging", number=2, by=dana)

    assert [revision_pinned(record=skill, ref=ref).number for ref in (1, "3", "staging", "production")] == [1, 3, 2, 3]
    for ref in (9, "0", "canary", True):
        with pytest.raises(RevisionUnknown):
            revision_pinned(record=skill, ref=ref)
    unlabelled = Skill(skill_id="plain")
    skill_save(skill=unlabelled, body="# Plain", author=dana)
    with pytest.raises(RevisionUnknown, match="No revision of plain is labelled staging"):
        revision_pinned(record=unlabelled, ref="staging")


def test_moving_to_an_unknown_revision_or_label_changes_nothing(skill, dana):
    with pytest.raises(RevisionUnknown, match="research has no revision 7: its revisions are 1 to 3"):
        skill_label_move(skill=skill, label="production", number=7, by=dana)
    with pytest.raises(RevisionUnknown):
        skill_label_move(skill=skill, label="canary", number=1, by=dana)

    assert not SkillLabel.objects.exists() and not AuditEntry.objects.filter(action="skill.label_moved").exists()


def test_each_move_is_in_the_audit_log_with_what_justified_it(skill, coder, dana):
    skill_label_move(skill=skill, label="production", number=2, by=dana)
    skill_label_move(skill=skill, label="production", number=3, by=dana, details={"experiment": 12})
    skill_label_move(skill=skill, label="production", number=3, by=dana)  # already there: no move, no entry
    profile_label_move(profile=coder, label="staging", number=2, by=dana)

    moves = list(AuditEntry.objects.filter(action="skill.label_moved").order_by("id"))
    assert [(entry.before, entry.after) for entry in moves] == [
        ({"label": "production", "revision": None}, {"label": "production", "revision": 2}),
        ({"label": "production", "revision": 2}, {"label": "production", "revision": 3, "experiment": 12})]
    assert moves[1].summary == "Labelled revision 3 of the skill research production (it was on revision 2)"
    profile_move = AuditEntry.objects.get(action="agent_profile.label_moved")
    assert (profile_move.actor, profile_move.object_id) == (dana, "coder")


def test_an_agent_call_runs_with_the_profiles_production_revision(coder, dana):
    assert profile_resolve(org_node="coder", project=None).instructions == "You are the coder, second revision."

    profile_label_move(profile=coder, label="production", number=1, by=dana)
    profile_label_move(profile=coder, label="staging", number=2, by=dana)
    with CaptureQueriesContext(connection) as queries:
        resolved = profile_resolve(org_node="coder", project=None)

    assert (resolved.revision_number, resolved.revision_id) == (1, coder.revisions.get(number=1).pk)
    assert "second revision" not in resolved.instructions
    assert len(queries) == 1  # still one statement a call


def test_a_projects_override_answers_to_its_own_labels(coder, dana):
    profile_label_move(profile=coder, label="production", number=1, by=dana)
    project = factories.ProjectFactory()
    override = profile_override_create(profile=coder, project=project, author=dana)
    override.instructions = "The project's coder, its second revision."
    profile_save(profile=override, author=dana)

    assert profile_resolve(org_node="coder", project=project).instructions == override.instructions
    profile_label_move(profile=override, label="production", number=1, by=dana)
    in_project = profile_resolve(org_node="coder", project=project)
    assert (in_project.revision_number, in_project.project_slug) == (1, project.slug)
    assert in_project.instructions == "You are the coder, second revision."  # the override began as a copy
