"""The audit log through the API: a project's leads (and administrators) read its log, filtered by action,
actor and time and paginated like the other lists; reviewers and viewers are refused, strangers find
nothing; administrators read the whole log and export it as JSON lines. A filter that cannot be read is
a 400 naming its field."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from graphs.audit import audit_record
from graphs.models import AuditEntry
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

Action = AuditEntry.Action


def record(*, actor, action=Action.RUN_CANCELLED, project=None, at=None, summary="Cancelled a run"):
    entry = audit_record(actor=actor, action=action, object_type="run", object_id="r1", summary=summary,
                         project=project)
    if at is not None:
        # The log refuses updates; a test sets a past time the way a migration would, below the manager.
        AuditEntry._base_manager.filter(pk=entry.pk).update(created_at=at)
    return entry


@pytest.fixture
def admin(db):
    return factories.UserFactory(username="root", is_staff=True)


@pytest.fixture
def logged(project, alice, bob):
    """Three entries of the project (alice's cancel and fork, bob's approval), one of another project, and a
    failed sign-in: oldest first, a day apart."""
    now = timezone.now()
    other = factories.ProjectFactory(slug="elsewhere")
    record(actor=alice, project=project, at=now - timedelta(days=4))
    record(actor=alice, action=Action.RUN_FORKED, project=project, at=now - timedelta(days=3))
    record(actor=bob, action=Action.PLAN_APPROVED, project=project, at=now - timedelta(days=2))
    record(actor=alice, project=other, at=now - timedelta(days=1))
    audit_record(actor="mallory", action=Action.SIGN_IN_FAILED, object_type="user", object_id="mallory",
                 summary="Failed to sign in as mallory", ip="198.51.100.4")
    return now


def actions(answer) -> list[str]:
    return [item["action"] for item in answer.json()["items"]]


def test_a_lead_reads_the_projects_log_newest_first(project, alice, logged):
    answer = signed_in(alice).get(f"/api/projects/{project.slug}/audit")

    assert answer.status_code == 200
    body = answer.json()
    assert (body["count"], body["page"], body["pages"]) == (3, 1, 1)
    assert actions(answer) == ["plan.approved", "run.forked", "run.cancelled"]
    first = body["items"][0]
    assert (first["actor"], first["action_words"], first["project"], first["object_type"], first["object_id"]) == (
        "bob", "approved a plan", project.slug, "run", "r1")
    assert {"id", "created_at", "summary", "before", "after", "ip"} <= set(first)


def test_the_log_filters_by_action_family_actor_and_time(project, alice, logged):
    client = signed_in(alice)
    url = f"/api/projects/{project.slug}/audit"
    since = (logged - timedelta(days=3, hours=1)).isoformat()
    until = (logged - timedelta(days=2, hours=1)).isoformat()

    assert actions(client.get(url, {"action": "run.forked"})) == ["run.forked"]
    assert actions(client.get(url, {"action": "run"})) == ["run.forked", "run.cancelled"]
    assert actions(client.get(url, {"actor": "bob"})) == ["plan.approved"]
    assert actions(client.get(url, {"since": since})) == ["plan.approved", "run.forked"]
    assert actions(client.get(url, {"since": since, "until": until})) == ["run.forked"]
    assert actions(client.get(url, {"actor": "alice", "action": "plan"})) == []


def test_the_log_is_paginated_like_the_other_lists(project, alice, logged):
    client = signed_in(alice)

    second = client.get(f"/api/projects/{project.slug}/audit", {"page_size": 2, "page": 2}).json()
    assert (second["count"], second["page"], second["pages"], [i["action"] for i in second["items"]]) == (
        3, 2, 2, ["run.cancelled"])
    refused = client.get(f"/api/projects/{project.slug}/audit", {"page_size": 101})
    assert (refused.status_code, refused.json()["code"]) == (400, "bad_page_size")


@pytest.mark.parametrize(("query", "field"), [
    ({"since": "yesterday"}, "since"),
    ({"until": "2026-13-45T00:00:00"}, "until"),
    ({"since": "2026-12-06T10:00:00Z", "until": "2026-12-05"}, "until"),
    ({"action": "run.deleted"}, "action"),
])
def test_a_filter_that_cannot_be_read_is_a_400_naming_its_field(project, alice, query, field):
    answer = signed_in(alice).get(f"/api/projects/{project.slug}/audit", query)

    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "bad_filter" and [item["field"] for item in body["fields"]] == [field]
    assert body["message"].startswith(f"{field}: ")


def test_reviewers_and_viewers_are_refused_and_strangers_find_nothing(project, bob, charlie, logged):
    viewer = factories.member(project, "victor", role="viewer")

    for user in (bob, viewer):
        answer = signed_in(user).get(f"/api/projects/{project.slug}/audit")
        assert (answer.status_code, answer.json()["code"]) == (403, "forbidden")
    assert signed_in(charlie).get(f"/api/projects/{project.slug}/audit").status_code == 404
    assert signed_in(charlie).get("/api/projects/no-such-project/audit").status_code == 404


def test_an_administrator_reads_any_projects_log_and_the_whole_of_it(project, admin, logged):
    client = signed_in(admin)

    assert client.get(f"/api/projects/{project.slug}/audit").json()["count"] == 3
    everything = client.get("/api/audit")
    assert everything.json()["count"] == 5
    assert actions(everything)[0] == "sign_in.failed" and everything.json()["items"][0]["ip"] == "198.51.100.4"
    assert actions(client.get("/api/audit", {"project": "elsewhere"})) == ["run.cancelled"]
    assert actions(client.get("/api/audit", {"actor": "mallory"})) == ["sign_in.failed"]


def test_only_administrators_read_the_whole_log_or_export_it(alice, logged):
    client = signed_in(alice)

    for url in ("/api/audit", "/api/audit/export"):
        answer = client.get(url)
        assert (answer.status_code, answer.json()["code"]) == (403, "forbidden")


def test_the_export_streams_json_lines_oldest_first_with_the_filters(project, admin, logged):
    answer = signed_in(admin).get("/api/audit/export", {"action": "run"})

    assert answer.status_code == 200 and answer.streaming
    assert answer["Content-Type"] == "application/x-ndjson"
    assert answer["Content-Disposition"].startswith('attachment; filename="audit-')
    lines = b"".join(answer.streaming_content).decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [(row["action"], row["project"]) for row in rows] == [
        ("run.cancelled", project.slug), ("run.forked", project.slug), ("run.cancelled", "elsewhere")]
    assert set(rows[0]) == set(signed_in(admin).get("/api/audit").json()["items"][0])


def test_the_export_refuses_a_bad_filter_before_streaming(admin):
    answer = signed_in(admin).get("/api/audit/export", {"until": "soon"})

    assert answer.status_code == 400 and answer.json()["fields"][0]["field"] == "until"


def test_no_operation_changes_or_deletes_an_entry(project, alice, admin, logged):
    entry = AuditEntry.objects.filter(project=project).first()
    client = signed_in(admin)

    for method in ("post", "put", "patch", "delete"):
        for url in (f"/api/projects/{project.slug}/audit", "/api/audit", f"/api/audit/{entry.pk}"):
            assert getattr(client, method)(url).status_code in (404, 405)
    assert AuditEntry.objects.count() == 5
