"""The projects API: create with the add_project permission, read what one may see, edit as a lead, manage
members; every refusal in the API's error shape, and nothing half-saved."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from graphs.models import Project, ProjectMembership
from tests import factories
from tests.clients import signed_in
from tests.repos import git

pytestmark = pytest.mark.django_db


@pytest.fixture
def erin(db):
    """Erin may create projects and belongs to none."""
    return factories.project_creator("erin")


def send(client, method: str, url: str, body: dict):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def new(folder, **more) -> dict:
    return {"slug": "shop", "name": "Shop", "target_folder": str(folder), **more}


def test_a_user_with_the_permission_creates_a_project_and_leads_it(erin, repo):
    head = git(repo, "rev-parse", "HEAD").strip()

    answer = send(signed_in(erin), "post", "/api/projects", new(repo, base_ref="main", max_run_cost_usd="3"))

    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["slug"], body["role"], body["target_folder"], Decimal(body["max_run_cost_usd"])) == (
        "shop", "lead", str(repo), 3)
    assert body["folder_check"]["repository"] is True and body["folder_check"]["commit"] == head
    assert ProjectMembership.objects.get(project__slug="shop").user == erin


def test_creating_without_the_permission_is_forbidden(alice, repo):
    answer = send(signed_in(alice), "post", "/api/projects", new(repo))

    assert (answer.status_code, answer.json()["code"]) == (403, "forbidden")
    assert not Project.objects.filter(slug="shop").exists()


def test_bad_fields_answer_400_naming_each_field(erin, tmp_path, project):
    answer = send(signed_in(erin), "post", "/api/projects", {
        "slug": project.slug, "name": "x" * 201, "target_folder": str(tmp_path / "gone"), "agent": "nope",
        "max_run_cost_usd": "-2"})

    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "invalid_project" and "nothing was saved" in body["message"]
    assert {item["field"] for item in body["fields"]} == {"slug", "name", "target_folder", "agent",
                                                          "max_run_cost_usd"}


def test_an_unknown_ref_and_a_plain_folder_with_a_ref_are_refused(erin, repo, tmp_path):
    unknown = send(signed_in(erin), "post", "/api/projects", new(repo, base_ref="nope")).json()
    plain = send(signed_in(erin), "post", "/api/projects", new(tmp_path, base_ref="main")).json()

    assert unknown["fields"] == [{"field": "base_ref", "message": "nope names no commit in this repository."}]
    assert "needs a git repository" in plain["fields"][0]["message"]


def test_a_nul_character_is_a_validation_error(erin, repo):
    answer = send(signed_in(erin), "post", "/api/projects", new(repo, name="Sh\x00op"))

    assert (answer.status_code, answer.json()["code"]) == (400, "validation_error")


def test_commands_need_the_confirmation(erin, repo):
    client = signed_in(erin)
    refused = send(client, "post", "/api/projects", new(repo, allow_commands=True))

    assert (refused.status_code, refused.json()["code"]) == (400, "confirmation_required")
    assert "run any program" in refused.json()["message"] and "confirm_commands" in refused.json()["message"]
    accepted = send(client, "post", "/api/projects", new(repo, allow_commands=True, confirm_commands=True))
    assert accepted.status_code == 201 and accepted.json()["allow_commands"] is True


def test_a_lead_edits_the_project_and_a_reviewer_may_not(project, alice, bob, repo):
    answer = send(signed_in(alice), "patch", f"/api/projects/{project.slug}", {
        "name": "Renamed", "target_folder": str(repo), "base_ref": "main", "max_run_cost_usd": None})

    assert answer.status_code == 200, answer.content
    assert (answer.json()["name"], answer.json()["folder_check"]["repository"]) == ("Renamed", True)
    refused = send(signed_in(bob), "patch", f"/api/projects/{project.slug}", {"name": "Mine"})
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    project.refresh_from_db()
    assert project.name == "Renamed"


def test_a_failing_edit_leaves_the_project_unchanged(project, alice, repo):
    before = (project.name, project.target_folder, project.base_ref)

    answer = send(signed_in(alice), "patch", f"/api/projects/{project.slug}", {
        "name": "Renamed", "target_folder": str(repo), "base_ref": "nope"})

    assert answer.status_code == 400
    project.refresh_from_db()
    assert (project.name, project.target_folder, project.base_ref) == before


def test_reading_shows_the_folder_to_leads_only_and_hides_the_project_from_strangers(project, alice, bob, charlie):
    for_alice = signed_in(alice).get(f"/api/projects/{project.slug}").json()
    for_bob = signed_in(bob).get(f"/api/projects/{project.slug}").json()

    assert for_alice["target_folder"] == project.target_folder and for_alice["folder_check"]["ok"] is True
    assert (for_bob["target_folder"], for_bob["folder_check"], for_bob["role"]) == (None, None, "reviewer")
    assert for_bob["agent"] == "" and for_bob["agent_used"] == "offline"
    assert signed_in(charlie).get(f"/api/projects/{project.slug}").status_code == 404


def test_a_lead_manages_members_by_username_and_role(project, alice, bob, charlie):
    client = signed_in(alice)
    url = f"/api/projects/{project.slug}/members"

    assert send(client, "post", url, {"username": "charlie", "role": "viewer"}).status_code == 201
    assert send(client, "patch", f"{url}/charlie", {"role": "reviewer"}).json() == {"username": "charlie",
                                                                                    "role": "reviewer"}
    assert client.delete(f"{url}/bob").status_code == 204
    assert client.get(url).json() == [{"username": "alice", "role": "lead"}, {"username": "charlie",
                                                                              "role": "reviewer"}]


def test_member_refusals_answer_with_their_reasons(project, alice, bob):
    client = signed_in(alice)
    url = f"/api/projects/{project.slug}/members"

    unknown = send(client, "post", url, {"username": "nobody", "role": "viewer"})
    twice = send(client, "post", url, {"username": "bob", "role": "viewer"})
    bad_role = send(client, "post", url, {"username": "bob", "role": "owner"})
    last_lead = client.delete(f"{url}/alice")
    demoted = send(client, "patch", f"{url}/alice", {"role": "viewer"})

    assert (unknown.status_code, unknown.json()["code"]) == (400, "unknown_user")
    assert (twice.status_code, twice.json()["code"]) == (409, "already_member")
    assert (bad_role.status_code, bad_role.json()["code"]) == (400, "invalid_member")
    assert (last_lead.status_code, last_lead.json()["code"]) == (409, "last_lead")
    assert "at least one lead" in demoted.json()["message"]
    assert ProjectMembership.objects.get(project=project, user=alice).role == "lead"


def test_a_non_lead_may_not_change_members(project, alice, bob, charlie):
    answer = send(signed_in(bob), "post", f"/api/projects/{project.slug}/members", {"username": "charlie",
                                                                                     "role": "lead"})

    assert (answer.status_code, answer.json()["code"]) == (403, "forbidden")
    assert not ProjectMembership.objects.filter(user=charlie).exists()


def test_the_folder_check_answers_what_the_form_shows(erin, repo, tmp_path):
    client = signed_in(erin)

    in_repo = send(client, "post", "/api/projects/folder-check", {"target_folder": str(repo)}).json()
    plain = send(client, "post", "/api/projects/folder-check", {"target_folder": str(tmp_path)}).json()

    assert (in_repo["ok"], in_repo["repository"], len(in_repo["commit"])) == (True, True, 40)
    assert (plain["ok"], plain["repository"]) == (True, False) and "neither isolated" in plain["notes"][0]
