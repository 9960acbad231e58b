"""An experiment asked for is checked whole: every problem is named at once, by its field, and nothing is
started; its variant's labels are resolved to the revision numbers it measures; leads start experiments,
reviewers and viewers read them, others meet a 404."""

from __future__ import annotations

import pytest
from ninja.testing import TestClient

from console.api import api
from graphs.models import Dataset, DatasetCase, Skill, Task, WorkGraphRun
from graphs.models.experiments import Experiment
from graphs.skills.revisions import skill_label_move, skill_save
from tests import factories

pytestmark = pytest.mark.django_db
client = TestClient(api)


@pytest.fixture
def dataset(project):
    dataset = Dataset.objects.create(project=project, name="cases")
    DatasetCase.objects.create(dataset=dataset, title="A case", goal_text="Do it.", base_commit="a" * 40)
    return dataset


def test_every_problem_of_an_experiment_is_named_at_once_and_nothing_is_started(dataset, alice):
    answer = client.post("/experiments", json={
        "dataset": dataset.pk, "name": " ", "repetitions": 6, "concurrency": 0, "max_cost_usd": -1,
        "variant": {"skills": {"nowhere": 1}, "profiles": {"coder": 7}, "agent": "nobody", "colour": "red"},
    }, user=alice)

    assert answer.status_code == 400 and answer.json()["code"] == "invalid_experiment"
    named = {field["field"] for field in answer.json()["fields"]}
    assert named == {"name", "repetitions", "concurrency", "max_cost_usd", "variant", "variant.skills.nowhere",
                     "variant.profiles.coder", "variant.agent"}
    assert not Experiment.objects.exists() and not WorkGraphRun.objects.exists() and not Task.objects.exists()


def test_a_dataset_with_checks_needs_a_project_that_allows_commands(dataset, alice):
    DatasetCase.objects.create(dataset=dataset, title="Checked", goal_text="Do it.", base_commit="b" * 40,
                               checks=[["pytest"]])

    answer = client.post("/experiments", json={"dataset": dataset.pk, "name": "checked"}, user=alice)

    assert answer.status_code == 400
    assert answer.json()["fields"] == [{"field": "dataset", "message": "Its cases have checks, which run as"
                                        " commands, and the project does not allow commands."}]


def test_a_variants_labels_are_resolved_to_the_revisions_it_measures(dataset, alice, dana, settings, inline_executor):
    settings.WORKGRAPH_AGENT = "offline"
    skill = Skill(skill_id="research", status=Skill.Status.ACTIVE)
    skill_save(skill=skill, body="# One", author=dana)
    skill_save(skill=skill, body="# Two", author=dana)
    skill_label_move(skill=skill, label="staging", number=2, by=dana)

    answer = client.post("/experiments", json={
        "dataset": dataset.pk, "name": "staging", "variant": {"skills": {"research": "staging"},
                                                              "profiles": {"coder": "production"}}}, user=alice)

    assert answer.status_code == 201, answer.json()
    assert answer.json()["pins"] == {"skills": {"research": 2}, "profiles": {"coder": 1}}
    run = WorkGraphRun.objects.get(experiment_item__experiment_id=answer.json()["id"])
    assert run.revision_pins == {"skills": {"research": 2}, "profiles": {"coder": 1}}
    assert run.start_commit == "a" * 40 and run.task.hidden


def test_leads_start_experiments_members_read_them_and_others_see_nothing(dataset, project, alice, bob, charlie,
                                                                          settings, inline_executor):
    settings.WORKGRAPH_AGENT = "offline"
    viewer = factories.member(project, "victor", role="viewer")
    assert client.post("/experiments", json={"dataset": dataset.pk, "name": "x"}, user=bob).status_code == 403
    assert client.post("/experiments", json={"dataset": dataset.pk, "name": "x"}, user=charlie).status_code == 404
    made = client.post("/experiments", json={"dataset": dataset.pk, "name": "x"}, user=alice).json()

    assert client.get(f"/experiments/{made['id']}", user=viewer).status_code == 200
    assert client.get(f"/experiments/{made['id']}", user=charlie).status_code == 404
    assert client.post(f"/experiments/{made['id']}/cancel", user=viewer).status_code == 403
