"""The audit log's pages: a project's (linked from the project page for its leads) and the whole log (in
the navigation for administrators, with its export). Each entry shows its time, actor, the action in
words, a link to its object and what changed, escaped; the filters are the API's, a bad one named on its
field; a page of entries costs the same few queries however many there are."""

from __future__ import annotations

import html
import re

import pytest
from django.utils.html import escape

from graphs.audit import audit_record
from graphs.engine.review import run_plan_approve
from graphs.models import AuditEntry
from graphs.skills.revisions import skill_save
from tests import factories
from tests.clients import signed_in
from tests.run_builders import planned_run

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("owned")</script>'


@pytest.fixture
def admin(db):
    return factories.UserFactory(username="root", is_staff=True)


def page_text(response) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_the_project_page_links_its_leads_to_the_audit_log(project, alice, bob):
    url = f"/projects/{project.slug}/audit/"

    assert url in signed_in(alice).get(f"/projects/{project.slug}/").content.decode()
    assert url not in signed_in(bob).get(f"/projects/{project.slug}/").content.decode()


def test_an_entry_shows_when_who_what_its_object_and_before_after(reviewed, project, alice, bob):
    task = factories.TaskFactory(project=project, title=HOSTILE)
    run = planned_run(task, {"nodes": [{"node_id": "a", "depends_on": []}], "edges": []}, status="awaiting_approval")
    run_plan_approve(run=run, reviewer=bob, comment="fine")
    audit_record(actor=alice, action=AuditEntry.Action.PROJECT_EDITED, object_type="project", object_id=project.slug,
                 project=project, before={"name": "Old"}, after={"name": HOSTILE}, summary="Changed name")

    response = signed_in(alice).get(f"/projects/{project.slug}/audit/")

    assert response.status_code == 200
    content = response.content.decode()
    assert HOSTILE not in content and escape(HOSTILE) in content
    assert f'href="/runs/{run.pk}/"' in content and f'href="/projects/{project.slug}/"' in content
    text = page_text(response)
    assert "approved a plan" in text and "bob" in text and f"of “{HOSTILE}”: fine" in text
    assert f"name: Old → {HOSTILE}" in " ".join(text.split())


def test_a_skill_name_in_a_summary_is_escaped_on_the_whole_log(admin, dana):
    skill = factories.SkillFactory(skill_id="s-1", name=HOSTILE)
    skill_save(skill=skill, body="# Body", author=dana)

    response = signed_in(admin).get("/audit/")

    content = response.content.decode()
    assert response.status_code == 200 and HOSTILE not in content
    assert 'href="/skills/s-1/"' in content and "edited a skill" in content


def test_the_page_filters_as_the_api_does_and_names_a_bad_filter(project, alice, bob):
    for actor in (alice, bob):
        audit_record(actor=actor, action=AuditEntry.Action.RUN_CANCELLED, object_type="run", object_id="r",
                     project=project, summary=f"Cancelled by {actor}")
    client = signed_in(alice)

    filtered = page_text(client.get(f"/projects/{project.slug}/audit/", {"actor": "bob", "action": "run"}))
    assert "Cancelled by bob" in filtered and "Cancelled by alice" not in filtered
    bad = client.get(f"/projects/{project.slug}/audit/", {"since": "last week"})
    assert bad.status_code == 400
    assert "Not an ISO 8601 date-time" in page_text(bad) and "Cancelled by" not in page_text(bad)


def test_viewers_are_refused_strangers_find_nothing_and_only_administrators_see_the_whole_log(
        project, alice, bob, charlie, admin):
    assert signed_in(bob).get(f"/projects/{project.slug}/audit/").status_code == 403
    assert signed_in(charlie).get(f"/projects/{project.slug}/audit/").status_code == 404
    assert signed_in(admin).get(f"/projects/{project.slug}/audit/").status_code == 200
    assert signed_in(alice).get("/audit/").status_code == 403
    assert 'href="/audit/"' not in signed_in(alice).get("/").content.decode()
    whole = signed_in(admin).get("/audit/", {"action": "run"}).content.decode()
    assert 'href="/audit/"' in whole and 'href="/api/audit/export?action=run"' in whole


def test_a_page_of_entries_costs_a_few_queries_however_many_there_are(project, alice,
                                                                        django_assert_max_num_queries):
    def fill(count: int) -> None:
        for index in range(count):
            audit_record(actor=alice, action=AuditEntry.Action.MEMBER_ROLE_CHANGED, object_type="member",
                         object_id=f"user{index}", project=project, summary="Changed a role",
                         before={"role": "viewer"}, after={"role": "lead"})

    client = signed_in(alice)
    fill(3)
    # The session, the user, the project, the role, the count and the page; the rest, the navigation's inbox.
    with django_assert_max_num_queries(10):
        assert client.get(f"/projects/{project.slug}/audit/").status_code == 200
    fill(60)
    with django_assert_max_num_queries(10):
        response = client.get(f"/projects/{project.slug}/audit/")
    assert response.content.decode().count("data-audit-entry=") == 50
    assert "Page 1 of 2" in page_text(response)
