"""A delivery that fails is explained and never loops: what may pass (a remote that cannot be reached, a forge that
is down) is tried again after a doubling backoff, ``WORKGRAPH_DELIVERY_ATTEMPTS`` tries in all, then fails; what
will not pass (a refused token, a token not set, a run that changed nothing) fails at once; every failure is said
in words naming the variable, never its value; a lead's Retry tries afresh; the run stays succeeded throughout; a
duplicate job does not try a delivery a try holds."""

from __future__ import annotations

import pytest
from django.utils import timezone

from graphs.delivery import deliveries
from graphs.delivery.deliveries import delivery_try_job, run_delivery_request
from graphs.models import RunDelivery, RunWorkspace, Task
from tests.deliveries import (
    TOKEN,
    TOKEN_ENV,
    delivering,
    delivery_of,
    remote_head,
    succeeded_run,
)
from tests.git_http_server import GitHttpServer, bare_repository, http_backend_required
from tests.standins.github_api import GitHubStandin

pytestmark = pytest.mark.django_db


@pytest.fixture
def quick_retries(settings):
    settings.WORKGRAPH_DELIVERY_ATTEMPTS = 3
    settings.WORKGRAPH_DELIVERY_BACKOFF_SECONDS = 0.01


@pytest.fixture
def run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks):
    return succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)


def asked(run, alice, executor) -> RunDelivery:
    run_delivery_request(run=run, by=alice)
    executor.drain_due()
    return delivery_of(run)


def retry_due_now(run, executor) -> RunDelivery:
    """Bring the waiting retry's time forward and run what follows, as the executor would once the backoff is
    over: the waiting job is dropped for one due now. A test's backoff outlasts any load, so no retry runs
    before the test says."""
    assert executor.pending() == 1, "the retry waits in the executor"
    RunDelivery.objects.filter(pk=run.pk).update(next_try_at=timezone.now())
    executor.discard()
    delivery_try_job(str(run.pk))
    executor.drain()
    return delivery_of(run)


def test_an_unreachable_remote_is_tried_again_after_a_backoff_then_fails_saying_how_often(
        run, repo_task, alice, inline_executor, forge_token, quick_retries, settings):
    settings.WORKGRAPH_DELIVERY_BACKOFF_SECONDS = 30
    delivering(repo_task.project, remote_url="http://127.0.0.1:9/app.git", forge_token_env=TOKEN_ENV)

    waiting = asked(run, alice, inline_executor)
    settings.WORKGRAPH_DELIVERY_BACKOFF_SECONDS = 0.01
    failed = retry_due_now(run, inline_executor)

    assert (waiting.state, waiting.attempts) == ("pending", 1)
    assert waiting.error.startswith("Could not reach http://127.0.0.1:9/app.git.")
    assert waiting.error.endswith("Trying again in 30 s (try 1 of 3).")
    assert 25 < (waiting.next_try_at - timezone.now()).total_seconds() <= 30
    assert (failed.state, failed.attempts, failed.next_try_at) == ("failed", 3, None)
    assert failed.error.endswith("Tried 3 times (WORKGRAPH_DELIVERY_ATTEMPTS).")
    run.refresh_from_db()
    assert run.status == "succeeded" and Task.objects.get(pk=run.task_id).status == "succeeded"


def test_a_refused_token_fails_at_once_naming_its_variable_and_never_its_value(
        run, repo_task, alice, inline_executor, forge_token, quick_retries, tmp_path):
    http_backend_required()
    root = tmp_path / "served"
    root.mkdir()
    bare_repository(root, "app.git")
    with GitHttpServer(root, password="tok_the-servers-own-password") as served:
        delivering(repo_task.project, remote_url=served.url_of("app.git"), forge_token_env=TOKEN_ENV)
        failed = asked(run, alice, inline_executor)

    assert (failed.state, failed.attempts) == ("failed", 1)
    assert f"the push used the token in {TOKEN_ENV} (forge_token_env)" in failed.error
    assert TOKEN not in failed.error and inline_executor.pending() == 0


def test_a_token_variable_not_set_fails_in_words(run, repo_task, bare_remote, alice, inline_executor, forge_token,
                                                 monkeypatch):
    monkeypatch.delenv(TOKEN_ENV)
    delivering(repo_task.project, remote_url=str(bare_remote), forge_token_env=TOKEN_ENV)

    failed = asked(run, alice, inline_executor)

    assert (failed.state, failed.error) == (
        "failed", f"The variable {TOKEN_ENV} (forge_token_env) is not set in the console's environment.")


def test_a_forge_that_is_down_is_tried_again_and_a_pull_request_opened_once_it_is_back(
        run, repo_task, bare_remote, alice, inline_executor, forge_token, quick_retries, settings):
    settings.WORKGRAPH_DELIVERY_BACKOFF_SECONDS = 30
    with GitHubStandin(token=TOKEN, remote=bare_remote) as standin:
        standin.outage = (503, {"message": f"Service unavailable (token {TOKEN} unchecked)"})
        delivering(repo_task.project, deliver="pull_request", remote_url=str(bare_remote), forge="github",
                   forge_api_url=standin.api_url, forge_repo="acme/app", forge_token_env=TOKEN_ENV)

        waiting = asked(run, alice, inline_executor)
        standin.outage = None
        opened = retry_due_now(run, inline_executor)

    branch = RunWorkspace.objects.get(run=run).branch
    assert waiting.state == "pending" and waiting.error.startswith(f"The branch {branch} was pushed; its pull"
                                                                   " request was not opened: The GitHub API answered")
    assert TOKEN not in waiting.error and f"(token [{TOKEN_ENV}] unchecked)" in waiting.error
    assert (opened.state, opened.attempts, opened.error, opened.pull_request_number) == ("opened", 2, "", 1)
    assert len(standin.requested("POST", "/repos/acme/app/pulls")) == 1


def test_a_lead_retries_a_failed_delivery_once_its_cause_is_corrected(
        run, repo_task, tmp_path, alice, inline_executor):
    delivering(repo_task.project, remote_url=str(tmp_path / "not-yet.git"))
    failed = asked(run, alice, inline_executor)

    bare_repository(tmp_path, "not-yet.git")
    retried = asked(run, alice, inline_executor)

    assert failed.state == "failed" and "No repository at" in failed.error
    assert (retried.state, retried.error, retried.attempts) == ("pushed", "", 1)
    assert remote_head(tmp_path / "not-yet.git", retried.remote_branch) == retried.head_commit


def test_an_error_the_console_did_not_expect_fails_the_delivery_in_words(
        run, repo_task, bare_remote, alice, inline_executor, monkeypatch):
    delivering(repo_task.project, remote_url=str(bare_remote))
    monkeypatch.setattr(deliveries, "branch_push", lambda **kwargs: {}["nothing"])

    failed = asked(run, alice, inline_executor)

    assert (failed.state, failed.error) == (
        "failed", "An error the console did not expect (KeyError); its log has the details.")


def test_a_run_that_changed_nothing_has_nothing_to_deliver(repo_task, bare_remote, alice, scripted_runner,
                                                           inline_executor, django_capture_on_commit_callbacks):
    scripted_runner.replies[("node", "export")] = "nothing written"
    run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)
    scripted_runner.replies.clear()
    RunWorkspace.objects.filter(run=run).update(head_commit=RunWorkspace.objects.get(run=run).base_commit)
    delivering(repo_task.project, remote_url=str(bare_remote))

    failed = asked(run, alice, inline_executor)

    assert failed.state == "failed" and failed.error.startswith("The run changed nothing:")
    assert remote_head(bare_remote, failed.remote_branch) is None


def test_a_job_finds_a_try_under_way_and_leaves_it_alone(run, repo_task, bare_remote, alice, inline_executor):
    delivering(repo_task.project, remote_url=str(bare_remote))
    run_delivery_request(run=run, by=alice)
    RunDelivery.objects.filter(pk=run.pk).update(tried_at=timezone.now())

    delivery_try_job(str(run.pk))

    held = delivery_of(run)
    assert (held.state, held.attempts) == ("pending", 0)
    assert remote_head(bare_remote, held.remote_branch) is None
