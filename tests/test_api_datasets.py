"""The datasets API: a lead makes datasets and adds cases given whole; a case's commit is resolved when it is
saved; bad input is a 400 naming every field at once, and saves nothing."""

from __future__ import annotations

import json

import pytest

from graphs.models import AuditEntry, Dataset, DatasetCase
from tests import factories
from tests.clients import signed_in
from tests.repos import git

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(project, repo):
    """The project works in ``repo``."""
    project.target_folder = str(repo)
    project.save(update_fields=["target_folder"])
    return project


@pytest.fixture
def dataset(shop, alice):
    return Dataset.objects.create(project=shop, name="Exports that failed", created_by=alice)


def send(client, method: str, url: str, body: dict):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def case(**more) -> dict:
    return {"title": "CSV export", "goal_text": "Add a CSV export.", "deliverables": ["An export button"],
            "acceptance_criteria": ["The CSV opens in a spreadsheet"], **more}


def test_a_lead_makes_a_dataset_and_reads_it_back(shop, alice):
    client = signed_in(alice)

    made = send(client, "post", f"/api/projects/{shop.slug}/datasets", {"name": " Regressions ",
                                                                        "description": "Runs that looped."})
    listed = client.get(f"/api/projects/{shop.slug}/datasets").json()

    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["name"], body["project"], body["case_count"], body["created_by"]) == ("Regressions", shop.slug, 0,
                                                                                      "alice")
    assert [item["id"] for item in listed] == [body["id"]]
    entry = AuditEntry.objects.get(action="dataset.created")
    assert (entry.actor, entry.project, entry.object_id) == (alice, shop, str(body["id"]))


def test_a_case_given_whole_is_saved_at_the_full_commit_its_ref_names(shop, alice, dataset, repo):
    head = git(repo, "rev-parse", "HEAD").strip()

    answer = send(signed_in(alice), "post", f"/api/datasets/{dataset.pk}/cases",
                  case(base_commit="main", checks=[["python3", "-m", "pytest", "-q"]], constraints=[" ", "No deps"]))

    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["base_ref"], body["base_commit"]) == ("main", head)
    assert body["checks"] == [["python3", "-m", "pytest", "-q"]]
    assert body["constraints"] == ["No deps"] and body["from_task"] is None and body["from_run"] is None
    detail = signed_in(alice).get(f"/api/datasets/{dataset.pk}").json()
    assert detail["case_count"] == 1 and [item["id"] for item in detail["cases"]] == [body["id"]]
    assert AuditEntry.objects.filter(action="dataset.case_added", object_id=str(dataset.pk)).count() == 1


def test_every_problem_of_a_case_is_named_at_once_and_nothing_is_saved(shop, alice, dataset):
    answer = send(signed_in(alice), "post", f"/api/datasets/{dataset.pk}/cases", case(
        goal_text="   ", deliverables=[], base_commit="no-such-branch", planning_mode="rounds", skill="nope",
        checks=[["pytest"], "pytest -q", ["pytest", ""], []]))

    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "invalid_case" and "nothing was saved" in body["message"]
    problems = {item["field"]: item["message"] for item in body["fields"]}
    assert set(problems) == {"goal_text", "deliverables", "base_commit", "planning_mode", "skill", "checks.1",
                             "checks.2", "checks.3"}
    assert problems["base_commit"] == "no-such-branch names no commit in this repository."
    assert "Argument 1 is not a non-empty string" in problems["checks.2"]
    assert not DatasetCase.objects.exists()
    assert not AuditEntry.objects.filter(action="dataset.case_added").exists()


def test_checks_that_are_no_list_are_named_beside_the_rest(shop, alice, dataset):
    answer = send(signed_in(alice), "post", f"/api/datasets/{dataset.pk}/cases", case(title="", checks="pytest"))

    assert {item["field"] for item in answer.json()["fields"]} == {"title", "checks"}


def test_a_case_without_a_commit_starts_from_the_projects_base_ref_as_it_is_now(shop, alice, dataset, repo):
    git(repo, "checkout", "--quiet", "-b", "release")
    (repo / "CHANGELOG").write_text("1.0\n")
    git(repo, "add", "CHANGELOG")
    git(repo, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-m", "release")
    shop.base_ref = "release"
    shop.save(update_fields=["base_ref"])

    body = send(signed_in(alice), "post", f"/api/datasets/{dataset.pk}/cases", case()).json()

    assert body["base_commit"] == git(repo, "rev-parse", "release").strip() and body["base_ref"] == ""


def test_a_project_folder_that_is_no_repository_cannot_hold_cases(project, alice):
    plain = Dataset.objects.create(project=project, name="Plain")

    answer = send(signed_in(alice), "post", f"/api/datasets/{plain.pk}/cases", case())

    assert answer.json()["fields"] == [{"field": "base_commit", "message": (
        "The project's folder is no git repository: a case needs a commit to start from.")}]


def test_a_dataset_name_is_unique_in_its_project_and_not_empty(shop, alice, dataset):
    client = signed_in(alice)

    taken = send(client, "post", f"/api/projects/{shop.slug}/datasets", {"name": dataset.name})
    empty = send(client, "patch", f"/api/datasets/{dataset.pk}", {"name": " ", "description": "x" * 4001})
    other = factories.ProjectFactory()
    factories.member(other, "alice", role="lead")
    elsewhere = send(client, "post", f"/api/projects/{other.slug}/datasets", {"name": dataset.name})

    assert taken.status_code == 400 and taken.json()["fields"] == [
        {"field": "name", "message": f"The project has a dataset named {dataset.name!r} already."}]
    assert {item["field"] for item in empty.json()["fields"]} == {"name", "description"}
    assert elsewhere.status_code == 201
    dataset.refresh_from_db()
    assert dataset.name == "Exports that failed"


def test_renaming_a_dataset_is_recorded_with_what_changed(dataset, alice):
    answer = send(signed_in(alice), "patch", f"/api/datasets/{dataset.pk}", {"name": "Flaky exports"})

    assert answer.status_code == 200 and answer.json()["name"] == "Flaky exports"
    entry = AuditEntry.objects.get(action="dataset.edited")
    assert (entry.before, entry.after) == ({"name": "Exports that failed"}, {"name": "Flaky exports"})
