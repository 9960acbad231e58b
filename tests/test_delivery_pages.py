"""The task page shows a succeeded run's delivery — its state, the branch on the remote, the pull request, the
checks, why it failed — and gives a lead its Deliver, Retry or Deliver again button; a viewer reads it and gets
no button; a lead of a project that delivers nothing is told where to set it."""

from __future__ import annotations

import pytest

from graphs.models import RunDelivery
from tests import factories
from tests.clients import signed_in
from tests.deliveries import (
    delivering,
    delivery_of,
    succeeded_run,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks):
    return succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)


def task_page(user, run) -> str:
    answer = signed_in(user).get(f"/tasks/{run.task_id}/")
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_lead_delivers_from_the_task_page_and_reads_how_it_went(run, repo_task, bare_remote, alice, inline_executor):
    delivering(repo_task.project, remote_url=str(bare_remote))
    before = task_page(alice, run)

    posted = signed_in(alice).post(f"/runs/{run.run_id}/deliver/", {"next": f"/tasks/{run.task_id}/"})
    inline_executor.drain()
    after = task_page(alice, run)

    delivery = delivery_of(run)
    assert 'data-delivery="none"' in before and '>Deliver</button>' in before
    assert posted.status_code == 302 and posted["Location"] == f"/tasks/{run.task_id}/"
    assert 'data-delivery="pushed"' in after and f"<code data-delivery-branch>{delivery.remote_branch}</code>" in after
    assert delivery.head_commit[:12] in after and '>Deliver again</button>' in after


def test_a_failed_delivery_shows_its_reason_and_a_retry_and_a_viewer_reads_it_without_a_button(
        run, repo_task, alice, inline_executor):
    viewer = factories.member(repo_task.project, "victor", role="viewer")
    delivering(repo_task.project, remote_url="/no/such/remote.git")
    RunDelivery.objects.create(run=run, state="failed", mode="push", remote_branch="workgraph/run-x",
                               error="No repository at /no/such/remote.git: check remote_url.")

    lead, read = task_page(alice, run), task_page(viewer, run)

    assert "No repository at /no/such/remote.git: check remote_url." in lead and ">Retry</button>" in lead
    assert "No repository at /no/such/remote.git" in read and 'data-action="deliver"' not in read


def test_an_opened_pull_request_is_linked_with_its_checks(run, repo_task, bare_remote, alice):
    delivering(repo_task.project, deliver="pull_request", remote_url=str(bare_remote), forge="github",
               forge_api_url="https://api.github.com", forge_repo="acme/app")
    RunDelivery.objects.create(run=run, state="opened", mode="pull_request", remote_branch="workgraph/run-x",
                               pull_request_number=7, pull_request_url="https://github.example/acme/app/pull/7",
                               checks=[{"name": "tests", "status": "completed", "conclusion": "failure",
                                        "url": "https://ci.example/1"}])

    page = task_page(alice, run)

    assert 'href="https://github.example/acme/app/pull/7"' in page and "pull request #7" in page
    assert 'data-check="tests"' in page and "tests</a>: completed, failure" in page


def test_a_lead_of_a_project_that_delivers_nothing_is_told_where_to_set_it(run, alice):
    page = task_page(alice, run)

    assert "The project delivers nothing: a lead sets where in its delivery settings." in page
    assert 'data-action="deliver"' not in page
