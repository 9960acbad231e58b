"""Decisions outside a run are on the audit log too: skill and agent-profile edits (the fields a revision
changed, before and after) and skill status moves, a project's profile override removed, API tokens
created and revoked, webhooks added and deleted, and sign-ins that failed (the name tried and the
address). Saves nobody made — a shipped profile, an unchanged save — leave no entry."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graphs.models import AgentProfile, AuditEntry, Skill
from graphs.notifications.webhooks import webhook_create
from graphs.profiles.resolve import profile_console, profile_override_create
from graphs.profiles.revisions import profile_save
from graphs.skills.revisions import skill_save
from graphs.skills.statuses import skill_status_change
from graphs.tokens import token_create
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

Action = AuditEntry.Action


def entries(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action).order_by("id"))


def test_a_skill_created_then_edited_records_each_revision_with_the_fields_it_changed(dana):
    skill = Skill(skill_id="csv-export", name="CSV <export>", description="Exports")
    skill_save(skill=skill, body="# First", author=dana, note="new")
    skill.description = "Exports CSV"
    skill_save(skill=skill, body="# Second", author=dana, note="clearer")
    skill_save(skill=skill, body="# Second", author=dana)

    created, edited = entries(Action.SKILL_EDITED)
    assert (created.actor_name, created.object_type, created.object_id, created.before) == (
        "dana", "skill", "csv-export", None)
    assert created.after["name"] == "CSV <export>"
    assert created.summary == "Created the skill csv-export (revision 1): new"
    assert (edited.before, edited.after) == ({"description": "Exports", "body": "# First"},
                                             {"description": "Exports CSV", "body": "# Second"})
    assert edited.summary == "Edited the skill csv-export (revision 2): clearer"


def test_a_skill_edited_on_its_page_and_its_status_moved_name_the_editor(dana):
    skill = factories.SkillFactory(skill_id="reports")
    skill_save(skill=skill, body=skill.body, author=None)
    client = signed_in(dana)

    client.post("/skills/reports/edit/", {"name": "Reports", "description": "", "owner_org_node": "",
                                          "body": "# Reports\n\nNew body.", "note": "", "base_revision": "1"})
    skill_status_change(skill=skill, status="active", reason="ready", by=dana)

    (edit,) = entries(Action.SKILL_EDITED)[:1]
    status = entries(Action.SKILL_EDITED)[-1]
    assert (edit.actor_name, edit.after["body"]) == ("dana", "# Reports\n\nNew body.")
    assert (status.actor_name, status.before, status.after) == ("dana", {"status": "draft"}, {"status": "active"})


def test_a_profile_edit_records_its_changed_settings_and_a_shipped_profile_records_nothing(dana, project):
    profile = profile_console("coder")
    assert not AuditEntry.objects.exists()

    profile.model = "claude-opus-4"
    profile_save(profile=profile, author=dana, note="stronger")
    override = profile_override_create(profile=profile, project=project, author=dana)

    edit, copied = entries(Action.AGENT_PROFILE_EDITED)
    assert (edit.actor_name, edit.object_id, edit.project, edit.after) == (
        "dana", "coder", None, {"model": "claude-opus-4"})
    assert edit.before == {"model": ""}
    assert (copied.project, copied.project_slug, copied.before) == (project, project.slug, None)
    assert copied.summary.startswith(f"Created {project.slug}'s override of the coder agent profile")
    assert override.pk


def test_removing_a_projects_override_is_recorded(dana, project):
    override = profile_override_create(profile=profile_console("coder"), project=project, author=dana)

    signed_in(dana).post(f"/agents/coder/projects/{project.slug}/delete/")

    assert not AgentProfile.objects.filter(pk=override.pk).exists()
    removed = entries(Action.AGENT_PROFILE_EDITED)[-1]
    assert (removed.actor_name, removed.project_slug, removed.after) == ("dana", project.slug, None)
    assert removed.summary == f"Removed {project.slug}'s override of the coder agent profile"


def test_tokens_created_and_revoked_are_recorded_without_the_token(alice):
    client = signed_in(alice)
    created = client.post("/api/tokens", data=json.dumps({"name": "laptop"}), content_type="application/json").json()

    assert client.delete(f"/api/tokens/{created['id']}").status_code == 204

    (made,) = entries(Action.TOKEN_CREATED)
    (revoked,) = entries(Action.TOKEN_REVOKED)
    assert (made.actor_name, made.object_type, made.object_id) == ("alice", "token", str(created["id"]))
    assert (revoked.actor_name, revoked.object_id) == ("alice", str(created["id"]))
    text = json.dumps([made.summary, revoked.summary, made.after, revoked.after])
    assert created["token"] not in text and created["prefix"] in made.summary


def test_a_password_change_records_the_tokens_it_revoked(alice):
    token_create(user=alice, name="one")
    token_create(user=alice, name="two")

    alice.set_password("a new and different passphrase")
    alice.save()

    (revoked,) = entries(Action.TOKEN_REVOKED)
    assert (revoked.actor, revoked.object_type, revoked.object_id) == (None, "user", str(alice.pk))
    assert revoked.summary.startswith("Revoked alice's 2 API tokens")


def test_webhooks_added_and_deleted_are_recorded_without_their_secret_or_path(project, alice, settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    hook = webhook_create(project=project, url="http://127.0.0.1:9/hooks/T000/secret-part", events=["run.failed"],
                          created_by=alice)

    assert signed_in(alice).delete(f"/api/projects/{project.slug}/webhooks/{hook.pk}").status_code == 204

    (added,) = entries(Action.WEBHOOK_CREATED)
    (deleted,) = entries(Action.WEBHOOK_DELETED)
    assert added.after == {"url": "http://127.0.0.1:9/…", "events": ["run.failed"], "format": "json"}
    assert (deleted.actor_name, deleted.project_slug, deleted.before["url"]) == (
        "alice", project.slug, "http://127.0.0.1:9/…")
    text = json.dumps([added.summary, added.after, deleted.summary, deleted.before])
    assert "secret-part" not in text and hook.secret not in text


def test_a_webhook_deleted_on_the_notifications_page_names_its_lead(project, alice, settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    hook = webhook_create(project=project, url="http://127.0.0.1:9/", events=["run.failed"], created_by=alice)

    signed_in(alice).post(f"/projects/{project.slug}/notifications/", {"action": "webhook_delete",
                                                                        "webhook_id": str(hook.pk)})

    assert [entry.actor_name for entry in entries(Action.WEBHOOK_DELETED)] == ["alice"]


def test_a_failed_sign_in_records_the_name_tried_and_the_address_never_the_password(alice):
    Client(REMOTE_ADDR="203.0.113.7").post("/login/", {"username": "alice", "password": "not-her-password"})
    Client(REMOTE_ADDR="203.0.113.8").post("/login/", {"username": "nobody<b>", "password": "guess"})
    Client(REMOTE_ADDR="203.0.113.9").post("/login/", {"username": "alice", "password": "correct horse battery staple"})

    failed = entries(Action.SIGN_IN_FAILED)
    assert [(entry.actor, entry.actor_name, entry.ip, entry.project) for entry in failed] == [
        (None, "alice", "203.0.113.7", None), (None, "nobody<b>", "203.0.113.8", None)]
    assert failed[0].summary == "Failed to sign in as alice"
    assert "not-her-password" not in json.dumps([(e.summary, e.object_id, e.before, e.after) for e in failed])
