"""The project pages: New project (with the add_project permission), a project's settings and members (its
leads); each rule's message on the field it names, and nothing saved until all are right."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from graphs.models import Project, ProjectMembership
from graphs.projects.edits import COMMANDS_CONFIRMATION
from tests import factories
from tests.clients import signed_in
from tests.repos import git

pytestmark = pytest.mark.django_db


@pytest.fixture
def erin(db):
    return factories.project_creator("erin")


def form(folder, **more) -> dict:
    return {"slug": "shop", "name": "Shop", "target_folder": str(folder), "base_ref": "", "agent": "",
            "max_run_cost_usd": "", **more}


def test_the_dashboard_links_new_project_for_those_who_may_create_one(erin, alice):
    assert 'id="new-project"' in signed_in(erin).get("/").content.decode()
    assert 'id="new-project"' not in signed_in(alice).get("/").content.decode()
    assert signed_in(alice).get(reverse("project_new")).status_code == 403


def test_a_project_is_created_from_the_page_and_the_creator_lands_on_it_as_lead(erin, repo):
    answer = signed_in(erin).post(reverse("project_new"), form(repo, base_ref="main", max_run_cost_usd="5"))

    assert answer.status_code == 302 and answer["Location"] == reverse("project_detail", args=["shop"])
    project = Project.objects.get(slug="shop")
    assert (project.base_ref, str(project.max_run_cost_usd)) == ("main", "5.0000")
    assert ProjectMembership.objects.get(project=project).user == erin


def test_problems_show_on_their_fields_with_the_folder_check_and_nothing_is_saved(erin, repo):
    page = signed_in(erin).post(reverse("project_new"), form(repo, slug="Bad Slug", base_ref="nope",
                                                             max_run_cost_usd="-1"))

    text = page.content.decode()
    assert page.status_code == 400
    assert 'id="error-slug"' in text and 'id="error-max_run_cost_usd"' in text
    assert "nope names no commit in this repository." in text
    assert 'data-fact="repository"' in text
    assert not Project.objects.exists()


def test_a_plain_folder_is_said_to_be_neither_isolated_nor_recorded(erin, tmp_path):
    page = signed_in(erin).post(reverse("project_new"), form(tmp_path, slug="Bad Slug"))

    assert "neither isolated on a run branch nor recorded" in page.content.decode()


def test_allowing_commands_on_the_page_needs_the_confirmation_box(erin, repo):
    client = signed_in(erin)
    refused = client.post(reverse("project_new"), form(repo, allow_commands="on"))

    assert refused.status_code == 400
    assert html.escape(COMMANDS_CONFIRMATION) in refused.content.decode()
    assert 'id="error-allow_commands"' in refused.content.decode()
    accepted = client.post(reverse("project_new"), form(repo, allow_commands="on", confirm_commands="on"))
    assert accepted.status_code == 302 and Project.objects.get(slug="shop").allow_commands


def test_a_lead_edits_the_settings_and_the_page_shows_the_commit(project, alice, repo):
    client = signed_in(alice)
    head = git(repo, "rev-parse", "HEAD").strip()

    saved = client.post(reverse("project_edit", args=[project.slug]), {
        "name": "Renamed", "target_folder": str(repo), "base_ref": "main", "agent": "offline",
        "max_run_cost_usd": "1.5"})
    assert saved.status_code == 302, saved.content.decode()[:2000]
    project.refresh_from_db()
    assert (project.name, project.agent, str(project.max_run_cost_usd)) == ("Renamed", "offline", "1.5000")
    page = client.get(reverse("project_edit", args=[project.slug])).content.decode()
    assert head in page and 'value="1.5"' in page


def test_a_failing_edit_changes_nothing(project, alice):
    name = project.name

    page = signed_in(alice).post(reverse("project_edit", args=[project.slug]), {
        "name": "Renamed", "target_folder": "/nowhere/at/all", "agent": ""})

    assert page.status_code == 400 and "There is no folder at /nowhere/at/all." in page.content.decode()
    project.refresh_from_db()
    assert project.name == name


def test_only_leads_see_and_use_the_settings(project, alice, bob, charlie):
    assert 'id="project-settings-link"' in signed_in(alice).get(reverse("project_detail", args=[project.slug])
                                                                ).content.decode()
    assert 'id="project-settings-link"' not in signed_in(bob).get(reverse("project_detail", args=[project.slug])
                                                                  ).content.decode()
    assert signed_in(bob).get(reverse("project_edit", args=[project.slug])).status_code == 403
    assert signed_in(charlie).get(reverse("project_edit", args=[project.slug])).status_code == 404


def test_a_lead_adds_a_member_changes_their_role_and_removes_them(project, alice, charlie):
    client = signed_in(alice)
    members = reverse("project_members", args=[project.slug])

    assert client.post(members, {"username": "charlie", "role": "viewer"}).status_code == 302
    change = reverse("project_member_change", args=[project.slug, "charlie"])
    client.post(change, {"action": "role", "role": "reviewer"})
    assert ProjectMembership.objects.get(project=project, user=charlie).role == "reviewer"
    client.post(change, {"action": "remove"})
    assert not ProjectMembership.objects.filter(project=project, user=charlie).exists()


def test_an_unknown_username_is_named_on_the_form(project, alice):
    page = signed_in(alice).post(reverse("project_members", args=[project.slug]), {"username": "nobody",
                                                                                   "role": "viewer"})

    assert page.status_code == 400 and "No active user is called &#x27;nobody&#x27;." in page.content.decode()


def test_the_last_lead_stays_and_the_page_says_why(project, alice):
    client = signed_in(alice)

    answer = client.post(reverse("project_member_change", args=[project.slug, "alice"]), {"action": "remove"},
                         follow=True)

    assert "must keep at least one lead" in answer.content.decode()
    assert ProjectMembership.objects.get(project=project, user=alice).role == "lead"


def test_a_non_lead_reads_the_members_but_may_not_change_them(project, alice, bob, charlie):
    page = signed_in(bob).get(reverse("project_members", args=[project.slug])).content.decode()

    assert "alice" in page and 'id="member-add"' not in page
    refused = signed_in(bob).post(reverse("project_member_change", args=[project.slug, "alice"]),
                                  {"action": "remove"})
    assert refused.status_code == 403
    assert signed_in(bob).post(reverse("project_members", args=[project.slug]),
                               {"username": "charlie", "role": "lead"}).status_code == 403
    assert ProjectMembership.objects.filter(project=project).count() == 2
