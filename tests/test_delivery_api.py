"""A run's delivery through the API: ``delivery`` on the run (null until it is delivered; its state, branch, pull
request, checks and error once it is), and ``POST /api/runs/<id>/deliver`` — a lead's first delivery, retry or
delivery again, on the audit log; refused, in words, for a run that did not succeed or a project that delivers
nothing; a reviewer's and a stranger's answers are a project's usual 403 and 404."""

from __future__ import annotations

import pytest

from graphs.models import AuditEntry, RunWorkspace
from tests import factories
from tests.clients import signed_in
from tests.deliveries import delivering, delivery_of, remote_head, succeeded_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks):
    """A run that succeeded before its project delivered anything."""
    return succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)


def deliver(user, run):
    return signed_in(user).post(f"/api/runs/{run.run_id}/deliver")


def test_a_run_never_delivered_has_no_delivery_and_a_lead_delivers_it(run, repo_task, bare_remote, alice,
                                                                      inline_executor):
    before = signed_in(alice).get(f"/api/runs/{run.run_id}").json()
    delivering(repo_task.project, remote_url=str(bare_remote))

    asked = deliver(alice, run)
    inline_executor.drain()
    after = signed_in(alice).get(f"/api/runs/{run.run_id}").json()["delivery"]

    branch = RunWorkspace.objects.get(run=run).branch
    assert before["delivery"] is None
    assert asked.status_code == 202 and asked.json()["state"] == "pending"
    assert {key: after[key] for key in ("state", "state_label", "remote_branch", "pull_request", "checks", "error",
                                        "attempts", "trigger")} == {
        "state": "pushed", "state_label": "Pushed", "remote_branch": branch, "pull_request": None, "checks": [],
        "error": "", "attempts": 1, "trigger": "requested"}
    assert after["head_commit"] == remote_head(bare_remote, branch) and after["pushed_at"]
    entry = AuditEntry.objects.get(action="delivery.requested")
    assert (entry.actor, entry.object_id, entry.before, entry.after) == (
        alice, str(run.run_id), {"state": None}, {"state": "pending"})
    assert entry.summary == (f"Asked for the delivery of a run of \u201c{repo_task.title}\u201d to {bare_remote}"
                             f" ({branch})")


def test_asking_again_while_a_delivery_is_under_way_records_nothing_new(run, repo_task, bare_remote, alice,
                                                                       inline_executor):
    delivering(repo_task.project, remote_url=str(bare_remote))

    deliver(alice, run)
    deliver(alice, run)
    inline_executor.drain()

    assert AuditEntry.objects.filter(action="delivery.requested").count() == 1
    assert delivery_of(run).state == "pushed"


def test_a_run_that_did_not_succeed_or_a_project_that_delivers_nothing_is_refused(run, repo_task, bare_remote, alice):
    failed = factories.RunFactory(task=repo_task, status="failed")

    off = deliver(alice, run)
    delivering(repo_task.project, remote_url=str(bare_remote))
    not_succeeded = deliver(alice, failed)

    assert (off.status_code, off.json()["code"]) == (409, "delivery_off")
    assert off.json()["message"] == (f"The project {repo_task.project.slug} delivers nothing: its delivery setting is"
                                     " off. A lead sets where it delivers first.")
    assert (not_succeeded.status_code, not_succeeded.json()["code"]) == (409, "not_deliverable")
    assert not_succeeded.json()["message"] == "The run is failed: only a run that succeeded is delivered."


def test_only_a_lead_delivers_and_a_stranger_finds_no_run(run, repo_task, bare_remote, bob, charlie):
    delivering(repo_task.project, remote_url=str(bare_remote))

    assert deliver(bob, run).status_code == 403
    assert deliver(charlie, run).status_code == 404
    assert not AuditEntry.objects.filter(action="delivery.requested").exists()
