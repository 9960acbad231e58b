"""Decisions about a project are on its audit log: its creation, its edits (the fields changed, before and
after), its members added, given another role (before and after) and removed — through the API, the
pages and the Django admin alike. A change refused, or one that changes nothing, leaves no entry."""

from __future__ import annotations

import json
from decimal import Decimal
from html.parser import HTMLParser

import pytest

from graphs.models import AuditEntry, ProjectMembership
from graphs.projects.edits import ProjectInvalid, project_update
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

Action = AuditEntry.Action


def send(client, method: str, url: str, body: dict):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def only_entry() -> AuditEntry:
    (entry,) = AuditEntry.objects.all()
    return entry


def test_a_project_created_through_the_api_is_recorded_with_its_settings(repo):
    erin = factories.project_creator("erin")

    answer = send(signed_in(erin), "post", "/api/projects",
                  {"slug": "shop", "name": "Shop <script>", "target_folder": str(repo), "max_run_cost_usd": "3"})

    assert answer.status_code == 201, answer.content
    entry = only_entry()
    assert (entry.actor_name, entry.action, entry.object_type, entry.object_id, entry.project_slug) == (
        "erin", Action.PROJECT_CREATED, "project", "shop", "shop")
    assert entry.before is None
    assert (entry.after["name"], entry.after["max_run_cost_usd"], entry.after["allow_commands"]) == (
        "Shop <script>", "3", False)


def test_an_edit_records_only_the_fields_it_changed_before_and_after(project, alice):
    old_name = project.name

    answer = send(signed_in(alice), "patch", f"/api/projects/{project.slug}",
                  {"name": "Renamed", "max_run_cost_usd": "2.5", "base_ref": ""})

    assert answer.status_code == 200, answer.content
    entry = only_entry()
    assert (entry.actor_name, entry.action, entry.object_id) == ("alice", Action.PROJECT_EDITED, project.slug)
    assert entry.before == {"name": old_name, "max_run_cost_usd": None}
    assert entry.after == {"name": "Renamed", "max_run_cost_usd": "2.5"}


def test_an_edit_on_the_settings_page_names_its_lead(project, alice):
    form = {"name": "From the page", "target_folder": project.target_folder, "base_ref": "", "agent": "",
            "max_run_cost_usd": ""}

    signed_in(alice).post(f"/projects/{project.slug}/edit/", form)

    entry = only_entry()
    assert (entry.actor_name, entry.action, entry.after) == ("alice", Action.PROJECT_EDITED, {"name": "From the page"})


def test_an_edit_that_changes_nothing_or_is_refused_leaves_no_entry(project, alice):
    project_update(project=project, changes={"name": project.name}, by=alice)
    with pytest.raises(ProjectInvalid):
        project_update(project=project, changes={"name": "", "max_run_cost_usd": Decimal("-1")}, by=alice)

    assert not AuditEntry.objects.exists()


def test_members_added_given_a_role_and_removed_are_each_recorded(project, alice, charlie):
    client = signed_in(alice)

    assert send(client, "post", f"/api/projects/{project.slug}/members",
                {"username": "charlie", "role": "viewer"}).status_code == 201
    for _ in range(2):  # the second makes no change: no entry
        assert send(client, "patch", f"/api/projects/{project.slug}/members/charlie",
                    {"role": "reviewer"}).status_code == 200
    assert client.delete(f"/api/projects/{project.slug}/members/charlie").status_code == 204

    entries = AuditEntry.objects.order_by("id")
    assert [(e.action, e.object_type, e.object_id, e.before, e.after) for e in entries] == [
        (Action.MEMBER_ADDED, "member", "charlie", None, {"role": "viewer"}),
        (Action.MEMBER_ROLE_CHANGED, "member", "charlie", {"role": "viewer"}, {"role": "reviewer"}),
        (Action.MEMBER_REMOVED, "member", "charlie", {"role": "reviewer"}, None),
    ]
    assert {entry.actor_name for entry in entries} == {"alice"}


def test_a_member_change_on_the_members_page_names_its_lead(project, alice, bob):
    signed_in(alice).post(f"/projects/{project.slug}/members/bob/", {"role": "viewer"})

    entry = only_entry()
    assert (entry.actor_name, entry.action, entry.before, entry.after) == (
        "alice", Action.MEMBER_ROLE_CHANGED, {"role": "reviewer"}, {"role": "viewer"})


def test_a_refused_member_change_leaves_no_entry(project, alice):
    response = send(signed_in(alice), "patch", f"/api/projects/{project.slug}/members/alice", {"role": "viewer"})

    assert response.status_code == 409
    assert not AuditEntry.objects.exists()


def test_the_django_admin_records_a_project_edit_and_its_member_changes(project, alice, bob):
    admin = factories.UserFactory(username="root", is_staff=True, is_superuser=True)
    client = signed_in(admin)
    url = f"/admin/graphs/project/{project.pk}/change/"
    # The form as the admin renders it, every inline's management form included; then two fields edited.
    form = form_values(client.get(url).content.decode())
    bob_row = next(name for name, value in form.items() if name.endswith("-user") and value == str(bob.pk))
    form |= {"name": "Admin named", bob_row.removesuffix("-user") + "-role": "lead"}

    response = client.post(url, form)

    assert response.status_code == 302, response.content.decode()[:2000]
    entries = {entry.action: entry for entry in AuditEntry.objects.all()}
    assert set(entries) == {Action.PROJECT_EDITED, Action.MEMBER_ROLE_CHANGED}
    assert entries[Action.PROJECT_EDITED].after == {"name": "Admin named"}
    assert (entries[Action.MEMBER_ROLE_CHANGED].object_id, entries[Action.MEMBER_ROLE_CHANGED].before,
            entries[Action.MEMBER_ROLE_CHANGED].after) == ("bob", {"role": "reviewer"}, {"role": "lead"})
    assert {entry.actor_name for entry in entries.values()} == {"root"}


def form_values(page: str) -> dict[str, str]:
    """What a browser would send from the page's forms as they stand: inputs, checked boxes, the selected
    option of each select, each textarea's text."""

    class Form(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.values: dict[str, str] = {}
            self.select = self.textarea = None

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            name = attrs.get("name")
            if tag == "input" and name and attrs.get("type") not in ("submit", "button", "file"):
                if attrs.get("type") not in ("checkbox", "radio") or "checked" in attrs:
                    self.values[name] = attrs.get("value") or ""
            elif tag == "select" and name:
                self.select = name
                self.values.setdefault(name, "")
            elif tag == "option" and self.select and "selected" in attrs:
                self.values[self.select] = attrs.get("value") or ""
            elif tag == "textarea" and name:
                self.textarea = name
                self.values[name] = ""

        def handle_endtag(self, tag):
            if tag == "select":
                self.select = None
            elif tag == "textarea":
                self.textarea = None

        def handle_data(self, data):
            if self.textarea:
                self.values[self.textarea] += data

    parser = Form()
    parser.feed(page)
    return parser.values


def test_an_entry_that_cannot_be_written_undoes_its_decision(project, alice, charlie, monkeypatch):
    def broken(**_):
        raise RuntimeError("the log's table is gone")

    monkeypatch.setattr("graphs.projects.members.audit_record", broken)

    with pytest.raises(RuntimeError):
        send(signed_in(alice), "post", f"/api/projects/{project.slug}/members",
             {"username": "charlie", "role": "viewer"})

    assert not ProjectMembership.objects.filter(project=project, user=charlie).exists()
