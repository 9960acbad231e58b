"""A check that fails on a delivered pull request's head comes back as work: the forge's signed webhook (or a
poll) starts one follow-up run of the task, forked from the delivered run's node that changed the code, whose
attempt's prompt carries the check's name, its summary and the end of its log; its fix is pushed to the same
branch, so the same pull request updates. The same failure heard twice starts one run, a check of an older
commit starts none, and past WORKGRAPH_FORGE_FIX_ATTEMPTS the task page says a person is needed."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.delivery.polling import forge_poll_job
from graphs.models import ForgeFeedback, RunDelivery, WorkGraphRun
from tests.clients import signed_in
from tests.deliveries import (
    HOOK_SECRET,
    SECRET_ENV,
    TOKEN,
    TOKEN_ENV,
    delivering,
    delivery_of,
    remote_head,
    succeeded_run,
)
from tests.forge_events import event_post, github_check_run
from tests.repos import writes
from tests.standins.github_api import GitHubStandin

pytestmark = pytest.mark.django_db
LOG = "collecting ...\n" + "noise line\n" * 2000 + "FAILED tests/test_export.py::test_quotes - AssertionError\n"


@pytest.fixture
def github(bare_remote, forge_token):
    with GitHubStandin(token=TOKEN, remote=bare_remote) as standin:
        yield standin
    assert standin.violations == []


@pytest.fixture
def delivered(repo_task, bare_remote, github, scripted_runner, inline_executor, django_capture_on_commit_callbacks):
    delivering(repo_task.project, deliver="pull_request", remote_url=str(bare_remote), forge="github",
               forge_api_url=github.api_url, forge_repo="acme/app", forge_token_env=TOKEN_ENV,
               forge_webhook_secret_env=SECRET_ENV)
    run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)
    assert delivery_of(run).state == "opened"
    return run


def failing_check(delivery: RunDelivery, name: str = "tests", sha: str | None = None) -> dict:
    return github_check_run(name=name, head_sha=sha or delivery.head_commit, branch=delivery.remote_branch,
                            number=delivery.pull_request_number, summary="1 failed, 12 passed", text=LOG)


def post(project, payload, on_commit, executor):
    with on_commit(execute=True):
        answer = event_post(Client(), project.slug, "github", "check_run", payload, secret=HOOK_SECRET)
        executor.drain()
    executor.drain()
    assert answer.status_code == 202, answer.content
    return answer.json()


def test_a_failing_check_starts_a_follow_up_whose_fix_updates_the_same_pull_request(
        delivered, repo_task, bare_remote, github, scripted_runner, inline_executor,
        django_capture_on_commit_callbacks, settings):
    settings.WORKGRAPH_FORGE_CHECK_LOG_CHARS = 2000
    source = delivery_of(delivered)
    prompts = []

    def fix(call):
        prompts.append(call.prompt)
        return writes("src/export.py", "print('csv', 'quoted')\n")(call)

    scripted_runner.replies[("node", "export")] = fix

    said = post(repo_task.project, failing_check(source), django_capture_on_commit_callbacks, inline_executor)

    (feedback,) = ForgeFeedback.objects.all()
    assert feedback.outcome == "started" and feedback.name == "tests" and "follow-up run" in said["outcome"]
    follow_up = feedback.follow_up_run
    follow_up.refresh_from_db()
    assert follow_up.forked_from_id == delivered.pk and follow_up.status == WorkGraphRun.Status.SUCCEEDED
    (prompt,) = prompts
    assert "A check failed on the pull request" in prompt and "\u201ctests\u201d ended failure" in prompt
    assert "1 failed, 12 passed" not in prompt  # the head of a long log is cut, its end kept
    assert "FAILED tests/test_export.py::test_quotes" in prompt and len(prompt) < 2000 + 4000
    updated = delivery_of(follow_up)
    assert updated.state == "opened", updated.error
    assert updated.remote_branch == source.remote_branch
    assert updated.pull_request_number == source.pull_request_number and len(github.pulls) == 1
    assert remote_head(bare_remote, source.remote_branch) == updated.head_commit != source.head_commit


def test_the_same_failure_heard_twice_by_webhook_and_poll_starts_one_run(
        delivered, repo_task, github, inline_executor, django_capture_on_commit_callbacks):
    source = delivery_of(delivered)
    github.check_runs[source.head_commit] = [{
        "id": 4, "name": "tests", "status": "completed", "conclusion": "failure", "head_sha": source.head_commit,
        "html_url": "https://github.example/acme/app/runs/4", "output": {"title": "tests failed", "summary": "",
                                                                        "text": LOG}}]

    with django_capture_on_commit_callbacks(execute=True):
        assert forge_poll_job() == 1
    post(repo_task.project, failing_check(source), django_capture_on_commit_callbacks, inline_executor)
    post(repo_task.project, failing_check(source), django_capture_on_commit_callbacks, inline_executor)

    assert ForgeFeedback.objects.count() == 1
    assert WorkGraphRun.objects.filter(forked_from=delivered).count() == 1


def test_a_check_of_another_commit_starts_nothing(delivered, repo_task, inline_executor,
                                                  django_capture_on_commit_callbacks):
    source = delivery_of(delivered)

    said = post(repo_task.project, failing_check(source, sha="f" * 40), django_capture_on_commit_callbacks,
                inline_executor)

    assert "not the delivered head" in said["outcome"]
    assert not ForgeFeedback.objects.exists() and not WorkGraphRun.objects.filter(forked_from=delivered).exists()


def test_past_the_fix_attempts_the_task_page_says_a_person_is_needed(
        delivered, repo_task, alice, scripted_runner, inline_executor, django_capture_on_commit_callbacks, settings):
    settings.WORKGRAPH_FORGE_FIX_ATTEMPTS = 1
    scripted_runner.replies[("node", "export")] = writes("src/export.py", "print('csv', 'fixed')\n")
    post(repo_task.project, failing_check(delivery_of(delivered)), django_capture_on_commit_callbacks,
         inline_executor)
    follow_up = ForgeFeedback.objects.get().follow_up_run
    again = delivery_of(follow_up)

    post(repo_task.project, failing_check(again, name="lint"), django_capture_on_commit_callbacks, inline_executor)

    last = ForgeFeedback.objects.get(name="lint")
    assert last.outcome == "person_needed" and last.follow_up_run is None
    assert "WORKGRAPH_FORGE_FIX_ATTEMPTS is 1" in last.note and "a person is needed" in last.note
    assert WorkGraphRun.objects.filter(task=repo_task).count() == 2
    page = signed_in(alice).get(f"/tasks/{repo_task.pk}/").content.decode()
    assert 'data-forge-feedback="person_needed"' in page and "a person is needed" in page
    api = signed_in(alice).get(f"/api/runs/{follow_up.pk}").json()["delivery"]
    assert [(item["name"], item["outcome"]) for item in api["feedback"]] == [("lint", "person_needed")]
