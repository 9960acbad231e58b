"""A run's controls on every page that shows it: Approve and run starts the run, Start wherever a run is
ready, and each form goes back to the page it was on."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.models import WorkGraphRun
from tests import factories
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def awaiting(task):
    return planned_run(task, {"nodes": [node("a"), node("b", "a")], "edges": []}, status="awaiting_approval")


def test_a_lead_approves_and_runs_in_one_step_and_lands_on_the_graph(alice, awaiting, inline_executor):
    response = _client(alice).post(f"/runs/{awaiting.run_id}/approve/", {"start": "1", "comment": "fine"})
    assert response.status_code == 302 and response["Location"] == f"/runs/{awaiting.run_id}/"
    awaiting.refresh_from_db()
    assert awaiting.status == WorkGraphRun.Status.RUNNING and awaiting.review_decision == "approved"
    inline_executor.drain()
    awaiting.refresh_from_db()
    assert awaiting.status == WorkGraphRun.Status.SUCCEEDED


def test_a_reviewer_who_may_not_start_approves_only_and_is_told_so(bob, awaiting):
    client = _client(bob)
    page = client.get(f"/runs/{awaiting.run_id}/planning/").content.decode()
    assert '<button type="submit" data-action="approve">Approve</button>' in page
    assert "A lead starts the run once it is approved." in page
    response = client.post(f"/runs/{awaiting.run_id}/approve/", {"start": "1"}, follow=True)
    awaiting.refresh_from_db()
    assert awaiting.status == WorkGraphRun.Status.READY
    assert "Plan approved. A lead starts the run." in response.content.decode()


def test_every_page_that_shows_a_ready_run_offers_start_to_a_lead(alice, bob, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    for url in (f"/tasks/{task.pk}/", f"/runs/{run.run_id}/", f"/runs/{run.run_id}/planning/"):
        assert 'data-action="start"' in _client(alice).get(url).content.decode(), url
        assert 'data-action="start"' not in _client(bob).get(url).content.decode(), url


def test_the_graph_page_offers_approval_cancel_and_fork_with_confirmations(alice, awaiting, task):
    page = _client(alice).get(f"/runs/{awaiting.run_id}/").content.decode()
    assert 'data-action="approve">Approve and run</button>' in page
    assert 'data-confirm="Reject what this run waits for?' in page and 'data-confirm-for="reject"' in page
    assert 'data-action="cancel"' not in page  # cancel, not while awaiting approval
    finished = planned_run(task, {"nodes": [node("a")], "edges": []}, status="failed")
    factories.ExecutionFactory(run=finished, node_id="a", status="failed")
    panel = _client(alice).get(f"/runs/{finished.run_id}/panel/?node=a").content.decode()
    assert 'class="fork-node"' in panel and 'data-confirm="Fork the run from a? A new run reruns it' in panel


def test_a_control_goes_back_to_the_page_it_was_on_and_never_off_site(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    client = _client(alice)
    response = client.post(f"/runs/{run.run_id}/cancel/", {"next": f"/runs/{run.run_id}/"})
    assert response["Location"] == f"/runs/{run.run_id}/"
    other = planned_run(task, {"nodes": [node("a")], "edges": []})
    response = client.post(f"/runs/{other.run_id}/cancel/", {"next": "https://elsewhere.example/"})
    assert response["Location"] == f"/tasks/{task.pk}/"


def test_rejecting_needs_a_comment(alice, awaiting):
    response = _client(alice).post(f"/runs/{awaiting.run_id}/reject/", {"comment": " "}, follow=True)
    assert "Say why it is rejected: a rejection needs a comment, its reason." in response.content.decode()
    awaiting.refresh_from_db()
    assert awaiting.status == WorkGraphRun.Status.AWAITING_APPROVAL
