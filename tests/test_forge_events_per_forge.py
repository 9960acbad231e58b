"""Each forge's webhook events, shaped as its documentation describes them, and the same facts read by
polling through its stand-in, do what the forge says: a failing check on the delivered head starts a
follow-up run carrying it; a review that requests changes starts one carrying the review and its line
comments with the lines around them; merged and closed move the delivery's state. GitHub (check_run, status,
pull_request, pull_request_review), GitLab (Pipeline Hook, Merge Request Hook, Note Hook) and Gitea
(status, pull_request, pull_request_review_rejected)."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.delivery.polling import forge_poll_job
from graphs.models import ForgeFeedback, RunDelivery, WorkNodeExecution
from tests.deliveries import HOOK_SECRET, SECRET_ENV, TOKEN, TOKEN_ENV, delivering, delivery_of, succeeded_run
from tests.forge_events import (
    event_post,
    gitea_review,
    github_check_run,
    github_review,
    github_status,
    gitlab_merge_request,
    gitlab_note,
    gitlab_pipeline,
    pull_request_event,
)
from tests.standins.gitea_api import GiteaStandin
from tests.standins.github_api import GitHubStandin
from tests.standins.gitlab_api import GitLabStandin

pytestmark = pytest.mark.django_db
STANDINS = {"github": (GitHubStandin, "acme/app"), "gitlab": (GitLabStandin, "acme/platform/app"),
            "gitea": (GiteaStandin, "acme/app")}


@pytest.fixture(params=sorted(STANDINS))
def delivered(request, repo_task, bare_remote, forge_token, scripted_runner, inline_executor,
              django_capture_on_commit_callbacks):
    kind, repo = STANDINS[request.param]
    with kind(token=TOKEN, remote=bare_remote) as standin:
        delivering(repo_task.project, deliver="pull_request", remote_url=str(bare_remote), forge=request.param,
                   forge_api_url=standin.api_url, forge_repo=repo, forge_token_env=TOKEN_ENV,
                   forge_webhook_secret_env=SECRET_ENV)
        run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)
        delivery = delivery_of(run)
        assert delivery.state == "opened", delivery.error
        yield request.param, standin, delivery
    assert standin.violations == []


def post(delivery: RunDelivery, forge: str, event: str, payload: dict, on_commit) -> str:
    with on_commit(execute=True):
        answer = event_post(Client(), delivery.run.task.project.slug, forge, event, payload, secret=HOOK_SECRET)
    assert answer.status_code == 202, answer.content
    return answer.json()["outcome"]


def failing_check_event(forge: str, delivery: RunDelivery) -> tuple[str, dict, str]:
    sha, branch, number = delivery.head_commit, delivery.remote_branch, delivery.pull_request_number
    if forge == "github":
        return "check_run", github_check_run(name="tests", head_sha=sha, branch=branch, number=number,
                                             summary="1 failed", text="AssertionError: quotes"), "tests"
    if forge == "gitlab":
        return "Pipeline Hook", gitlab_pipeline(sha=sha, branch=branch, iid=number, job="pytest"), "pytest"
    return "status", github_status(sha=sha, context="ci/tests", description="2 tests failed"), "ci/tests"


def follow_up_attempt(row: ForgeFeedback) -> WorkNodeExecution:
    return row.follow_up_run.executions.get(node_id="export", cause="fork")


def test_a_failing_check_event_starts_a_follow_up_carrying_it(delivered, django_capture_on_commit_callbacks):
    forge, standin, delivery = delivered
    event, payload, name = failing_check_event(forge, delivery)
    if forge == "gitlab":  # GitLab serves a job's log apart: GET /projects/:id/jobs/:job_id/trace
        standin.traces[380] = "$ pytest\nE   AssertionError: quotes\n1 failed"

    post(delivery, forge, event, payload, django_capture_on_commit_callbacks)

    (row,) = ForgeFeedback.objects.all()
    assert (row.kind, row.name, row.outcome, row.source_run_id) == ("check", name, "started", delivery.run_id)
    carried = follow_up_attempt(row).input_payload["forge_check"]
    assert carried["name"] == name and carried["conclusion"] == "failure"
    assert carried["log"] == {"github": "tests failure\n\n1 failed\n\nAssertionError: quotes",
                              "gitlab": "script_failure\n\n$ pytest\nE   AssertionError: quotes\n1 failed",
                              "gitea": "2 tests failed"}[forge]
    assert carried["result_commit"]
    assert carried["pull_request"].startswith(f"pull request #{delivery.pull_request_number}")


def test_a_green_check_or_a_status_of_github_that_passes_starts_nothing(delivered, django_capture_on_commit_callbacks):
    forge, _, delivery = delivered
    if forge == "gitlab":
        event, payload = "Pipeline Hook", gitlab_pipeline(sha=delivery.head_commit, branch=delivery.remote_branch,
                                                          iid=delivery.pull_request_number, job="pytest",
                                                          status="success")
    else:
        event, payload = "status", github_status(sha=delivery.head_commit, context="ci/tests", state="success")

    post(delivery, forge, event, payload, django_capture_on_commit_callbacks)

    assert not ForgeFeedback.objects.exists()
    checks = RunDelivery.objects.get(pk=delivery.pk).checks
    assert {check["conclusion"] for check in checks} == {"success"}


@pytest.mark.parametrize("state", ["merged", "closed"])
def test_merged_or_closed_moves_the_delivery(delivered, state, django_capture_on_commit_callbacks):
    forge, _, delivery = delivered
    if forge == "gitlab":
        event, payload = "Merge Request Hook", gitlab_merge_request(
            iid=delivery.pull_request_number, branch=delivery.remote_branch, sha=delivery.head_commit, state=state,
            action="merge" if state == "merged" else "close")
    else:
        event, payload = "pull_request", pull_request_event(
            number=delivery.pull_request_number, branch=delivery.remote_branch, sha=delivery.head_commit,
            state="closed", merged=state == "merged")

    said = post(delivery, forge, event, payload, django_capture_on_commit_callbacks)

    assert said == f"the pull request is {state}"
    assert RunDelivery.objects.get(pk=delivery.pk).state == state


def review_on(forge: str, standin, delivery: RunDelivery) -> tuple[str, dict]:
    """The stand-in holds a review requesting changes with a comment on line 1; the event that says so."""
    number, sha, branch = delivery.pull_request_number, delivery.head_commit, delivery.remote_branch
    if forge == "github":
        standin.reviews[number] = [{"id": 80, "state": "CHANGES_REQUESTED", "body": "Quote the fields.",
                                    "user": {"login": "rita"}, "commit_id": sha, "html_url": "https://r/80"}]
        standin.comments[number] = [{"id": 501, "pull_request_review_id": 80, "path": "src/export.py", "line": 1,
                                     "body": "Use the csv module.", "user": {"login": "rita"}, "html_url": ""}]
        return "pull_request_review", github_review(number=number, branch=branch, sha=sha)
    if forge == "gitlab":
        standin.reviewers[number] = [{"user": {"id": 7, "username": "rita"}, "state": "requested_changes"}]
        standin.notes[number] = [{"id": 1244, "type": "DiffNote", "system": False, "body": "Use the csv module.",
                                  "author": {"username": "rita"},
                                  "position": {"new_path": "src/export.py", "new_line": 1}}]
        return "Note Hook", gitlab_note(iid=number, branch=branch)
    standin.reviews[number] = [{"id": 90, "state": "REQUEST_CHANGES", "body": "Quote the fields.",
                                "user": {"login": "rita"}, "commit_id": sha, "html_url": "", "dismissed": False}]
    standin.review_comments[90] = [{"id": 601, "path": "src/export.py", "position": 1, "body": "Use the csv module.",
                                    "user": {"login": "rita"}, "html_url": ""}]
    return "pull_request_review_rejected", gitea_review(number=number, branch=branch, sha=sha)


def test_a_review_requesting_changes_starts_a_follow_up_carrying_it_as_a_change_review(
        delivered, django_capture_on_commit_callbacks):
    forge, standin, delivery = delivered
    event, payload = review_on(forge, standin, delivery)

    post(delivery, forge, event, payload, django_capture_on_commit_callbacks)
    post(delivery, forge, event, payload, django_capture_on_commit_callbacks)

    (row,) = ForgeFeedback.objects.all()
    assert (row.kind, row.name, row.outcome) == ("review", "rita", "started")
    review = follow_up_attempt(row).input_payload["review"]
    assert review["reviewer"].startswith("rita on ")
    (comment,) = review["comments"]
    assert (comment["path"], comment["line"], comment["body"]) == ("src/export.py", 1, "Use the csv module.")
    assert comment["excerpt"] == [[1, "print('csv')"]]
    assert review["base_commit"] and review["result_commit"]


def test_polling_reads_a_failing_check_a_review_and_a_merge_through_the_stand_in(
        delivered, django_capture_on_commit_callbacks):
    forge, standin, delivery = delivered
    sha = delivery.head_commit
    if forge == "github":
        standin.check_runs[sha] = [{"id": 4, "name": "tests", "status": "completed", "conclusion": "failure",
                                    "head_sha": sha, "html_url": "", "output": {"summary": "1 failed"}}]
    elif forge == "gitlab":
        standin.pipelines.append({"id": 31, "sha": sha, "ref": delivery.remote_branch, "status": "failed",
                                  "web_url": ""})
        standin.jobs[31] = [{"id": 380, "name": "pytest", "status": "failed", "failure_reason": "script_failure",
                             "web_url": "", "allow_failure": False}]
    else:
        standin.statuses[sha] = [{"id": 1, "context": "ci/tests", "status": "failure", "description": "failed",
                                  "target_url": ""}]

    with django_capture_on_commit_callbacks(execute=True):
        assert forge_poll_job() == 1
    with django_capture_on_commit_callbacks(execute=True):
        forge_poll_job()

    assert list(ForgeFeedback.objects.values_list("kind", "outcome")) == [("check", "started")]
    assert [check["conclusion"] for check in RunDelivery.objects.get(pk=delivery.pk).checks] == ["failure"]
    merged = {"github": {"state": "closed", "merged": True}, "gitea": {"state": "closed", "merged": True},
              "gitlab": {"state": "merged"}}[forge]
    (getattr(standin, "merge_requests" if forge == "gitlab" else "pulls"))[0].update(merged)
    ForgeFeedback.objects.update(follow_up_run=None)  # the follow-up never ran: the source's pull request is read
    with django_capture_on_commit_callbacks(execute=True):
        forge_poll_job()
    assert RunDelivery.objects.get(pk=delivery.pk).state == "merged"
    with django_capture_on_commit_callbacks(execute=True):
        assert forge_poll_job() == 0  # a merged pull request is read no more
