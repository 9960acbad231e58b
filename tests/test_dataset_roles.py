"""Who may read and change a project's datasets: leads make them and add cases; reviewers and viewers read
them; anyone else meets the project's 404, on the API and the pages alike."""

from __future__ import annotations

import json

import pytest

from graphs.models import Dataset, DatasetCase
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(project, alice):
    return Dataset.objects.create(project=project, name="Regressions")


@pytest.fixture
def vera(project):
    """Vera views the project."""
    return factories.member(project, "vera", role="viewer")


def post(client, url: str, body: dict):
    return client.post(url, data=json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("reader", ["bob", "vera"])
def test_reviewers_and_viewers_read_datasets(request, reader, project, dataset):
    client = signed_in(request.getfixturevalue(reader))

    listed = client.get(f"/api/projects/{project.slug}/datasets")
    detail = client.get(f"/api/datasets/{dataset.pk}")
    page = client.get(f"/projects/{project.slug}/datasets/")

    assert (listed.status_code, detail.status_code, page.status_code) == (200, 200, 200)
    assert [item["name"] for item in listed.json()] == ["Regressions"]
    assert 'id="new-dataset"' not in page.content.decode()


@pytest.mark.parametrize("reader", ["bob", "vera"])
def test_reviewers_and_viewers_change_nothing(request, reader, project, dataset, task):
    client = signed_in(request.getfixturevalue(reader))

    made = post(client, f"/api/projects/{project.slug}/datasets", {"name": "Mine"})
    renamed = client.patch(f"/api/datasets/{dataset.pk}", data=json.dumps({"name": "Mine"}),
                           content_type="application/json")
    added = post(client, f"/api/datasets/{dataset.pk}/cases", {"from_task": str(task.pk)})
    page = client.post(f"/projects/{project.slug}/datasets/", {"name": "Mine"})

    assert [answer.status_code for answer in (made, renamed, added, page)] == [403, 403, 403, 403]
    assert made.json()["code"] == "forbidden"
    assert list(Dataset.objects.values_list("name", flat=True)) == ["Regressions"]
    assert not DatasetCase.objects.exists()


def test_someone_outside_the_project_finds_nothing(charlie, project, dataset):
    client = signed_in(charlie)

    answers = [client.get(f"/api/projects/{project.slug}/datasets"), client.get(f"/api/datasets/{dataset.pk}"),
               post(client, f"/api/datasets/{dataset.pk}/cases", {"title": "x"}),
               post(client, f"/api/projects/{project.slug}/datasets", {"name": "x"}),
               client.get(f"/projects/{project.slug}/datasets/")]

    assert [answer.status_code for answer in answers] == [404, 404, 404, 404, 404]


def test_an_unknown_dataset_is_404_and_signing_in_comes_first(alice, client):
    assert signed_in(alice).get("/api/datasets/999999").json()["code"] == "not_found"
    assert client.get("/api/datasets/999999").status_code == 401


def test_a_lead_makes_a_dataset_on_the_page_and_is_told_each_problem(alice, project, dataset):
    client = signed_in(alice)

    refused = client.post(f"/projects/{project.slug}/datasets/", {"name": "Regressions", "description": ""})
    made = client.post(f"/projects/{project.slug}/datasets/", {"name": "Flaky", "description": "Runs that retried."})

    assert refused.status_code == 400
    assert "The project has a dataset named &#x27;Regressions&#x27; already." in refused.content.decode()
    flaky = Dataset.objects.get(name="Flaky")
    assert made.status_code == 302 and made["Location"].endswith(f"/datasets/#dataset-{flaky.pk}")
