"""The pages' side of datasets: "Add to dataset" on a run that failed, was cancelled or had a node sent
back, for leads, on the run graph and the task page; and the project's datasets page listing each case."""

from __future__ import annotations

import re

import pytest

from graphs.engine import run_start
from graphs.models import Dataset, DatasetCase, RunWorkspace, WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.clients import signed_in
from tests.repos import writes, writes_then_gives_up
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db

ADD_FORM = re.compile(r'<form method="post" action="/runs/([0-9a-f-]+)/add-to-dataset/"')


def ran(task, runner, executor, reply) -> WorkGraphRun:
    runner.replies[("node", "export")] = reply
    nodes = [node("export")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    executor.drain()
    run.refresh_from_db()
    return run


@pytest.fixture
def failed(repo_task, scripted_runner, inline_executor):
    return ran(repo_task, scripted_runner, inline_executor, writes_then_gives_up("export.py", "print(1)\n"))


@pytest.fixture
def succeeded(repo_task, scripted_runner, inline_executor):
    return ran(repo_task, scripted_runner, inline_executor, writes("export.py", "print(1)\n"))


@pytest.fixture
def dataset(repo_task):
    return Dataset.objects.create(project=repo_task.project, name="Exports that failed")


def test_a_lead_adds_a_failed_run_from_its_graph_page_and_returns_there(failed, dataset, alice):
    client = signed_in(alice)
    page = client.get(f"/runs/{failed.run_id}/").content.decode()

    answer = client.post(f"/runs/{failed.run_id}/add-to-dataset/",
                         {"dataset": dataset.pk, "next": f"/runs/{failed.run_id}/"}, follow=True)

    assert failed.status == WorkGraphRun.Status.FAILED
    assert ADD_FORM.findall(page) == [str(failed.run_id)]
    assert f'<option value="{dataset.pk}">Exports that failed</option>' in page
    case = DatasetCase.objects.get(dataset=dataset)
    assert (case.from_run_id, case.base_commit) == (failed.pk, RunWorkspace.objects.get(run=failed).base_commit)
    assert answer.redirect_chain[-1][0] == f"/runs/{failed.run_id}/"
    assert f"Added to Exports that failed as a case starting from {case.base_commit[:12]}." in answer.content.decode()


def test_the_task_page_offers_it_on_the_failed_run_alone(failed, succeeded, dataset, alice):
    page = signed_in(alice).get(f"/tasks/{failed.task_id}/").content.decode()

    assert ADD_FORM.findall(page) == [str(failed.run_id)]


def test_a_run_whose_node_was_sent_back_is_offered_too(succeeded, dataset, alice):
    first = WorkNodeExecution.objects.get(run=succeeded, node_id="export")
    WorkNodeExecution.objects.create(run=succeeded, node_id="export", subagent_type=first.subagent_type, attempt=2,
                                     cause=WorkNodeExecution.Cause.REVIEW, status="succeeded")

    page = signed_in(alice).get(f"/runs/{succeeded.run_id}/").content.decode()

    assert ADD_FORM.findall(page) == [str(succeeded.run_id)]


def test_reviewers_are_not_offered_it_and_may_not_post_it(failed, dataset, bob):
    client = signed_in(bob)

    page = client.get(f"/runs/{failed.run_id}/").content.decode()
    answer = client.post(f"/runs/{failed.run_id}/add-to-dataset/", {"dataset": dataset.pk})

    assert "add-to-dataset" not in page and answer.status_code == 403
    assert not DatasetCase.objects.exists()


def test_with_no_dataset_yet_it_leads_to_the_datasets_page(failed, alice):
    page = signed_in(alice).get(f"/runs/{failed.run_id}/").content.decode()

    slug = failed.task.project.slug
    assert f'href="/projects/{slug}/datasets/#new-dataset"' in page and not ADD_FORM.findall(page)


def test_a_dataset_of_another_project_is_refused(failed, alice):
    other = Dataset.objects.create(project=factories.ProjectFactory(), name="Theirs")

    answer = signed_in(alice).post(f"/runs/{failed.run_id}/add-to-dataset/", {"dataset": other.pk}, follow=True)

    assert "Choose a dataset of the project to add the run to." in answer.content.decode()
    assert not DatasetCase.objects.exists()


def test_the_datasets_page_lists_each_case_with_its_commit_and_checks(failed, dataset, alice, bob):
    DatasetCase.objects.create(dataset=dataset, title="Export <b>CSV</b>", goal_text="Add it.",
                               base_commit=RunWorkspace.objects.get(run=failed).base_commit,
                               checks=[["python3", "-m", "pytest", "-q"]], from_run=failed)

    page = signed_in(bob).get(f"/projects/{failed.task.project.slug}/datasets/").content.decode()

    assert "Export &lt;b&gt;CSV&lt;/b&gt;" in page
    assert RunWorkspace.objects.get(run=failed).base_commit[:12] in page
    assert "<code class=\"check\">python3 -m pytest -q</code>" in page
    assert f'href="/runs/{failed.run_id}/">a run</a>' in page
