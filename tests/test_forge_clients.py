"""The forge clients read what each forge says, in one vocabulary, through its stand-in written from the forge's
published API description: a pull request found and its state (merged, closed), a commit's checks (GitHub's
check runs and statuses, GitLab's pipeline jobs, Gitea's statuses), reviews and their line comments; a second
pull request for a branch is the forge's documented refusal; a refused token, a forge that is down and a
forge that echoes the token are all said in words that never hold its value."""

from __future__ import annotations

from dataclasses import replace

import pytest

from graphs.delivery.credentials import Secret
from graphs.delivery.forge_clients import forge_client
from graphs.delivery.forge_clients.base import Check, ForgeError, PullRequestExists
from tests.deliveries import TOKEN, TOKEN_ENV
from tests.standins.gitea_api import GiteaStandin
from tests.standins.github_api import GitHubStandin
from tests.standins.gitlab_api import GitLabStandin

SHA = "a1" * 20
STANDINS = {"github": (GitHubStandin, "acme/app"), "gitlab": (GitLabStandin, "acme/platform/app"),
            "gitea": (GiteaStandin, "acme/app")}


@pytest.fixture(params=sorted(STANDINS))
def forge(request):
    kind, repo = STANDINS[request.param]
    with kind(token=TOKEN) as standin:
        yield request.param, standin, client_of(request.param, standin, repo)
    assert standin.violations == []


def client_of(name: str, standin, repo: str, token: str = TOKEN):
    return forge_client(forge=name, api_url=standin.api_url, repo=repo, token=Secret(TOKEN_ENV, token), timeout=10)


def pull_request_made(name: str, standin, *, head: str, base: str = "main", state: str = "open",
                      merged: bool = False):
    if name == "gitlab":
        states = {("open", False): "opened", ("closed", False): "closed", ("closed", True): "merged"}
        return standin.merge_request_add(source=head, target=base, state=states[(state, merged)])["iid"]
    return standin.pull_request_add(head=head, base=base, state=state, merged=merged)["number"]


def test_a_pull_request_is_opened_found_and_a_second_one_is_the_forges_refusal(forge):
    name, _, client = forge

    opened = client.pull_request_open(head="workgraph/run-1", base="main", title="Export CSV", body="The goal.")
    found = client.pull_request_find(head="workgraph/run-1", base="main")
    with pytest.raises(PullRequestExists) as again:
        client.pull_request_open(head="workgraph/run-1", base="main", title="Export CSV", body="The goal.")

    assert (opened.number, opened.state, opened.head_branch, opened.base_branch) == (1, "open", "workgraph/run-1",
                                                                                     "main")
    assert found == opened and opened.url.startswith("https://")
    assert again.value.status == {"github": 422, "gitlab": 409, "gitea": 409}[name]
    assert client.pull_request_find(head="workgraph/run-2", base="main") is None


def test_a_pull_requests_state_reads_merged_or_closed(forge):
    name, standin, client = forge
    merged = pull_request_made(name, standin, head="workgraph/run-1", state="closed", merged=True)
    closed = pull_request_made(name, standin, head="workgraph/run-2", state="closed")

    assert client.pull_request_get(number=merged).state == "merged"
    assert client.pull_request_get(number=closed).state == "closed"


def test_github_checks_are_its_check_runs_and_its_commit_statuses():
    with GitHubStandin(token=TOKEN) as standin:
        standin.check_runs[SHA] = [
            {"id": 1, "name": "tests", "status": "completed", "conclusion": "failure", "head_sha": SHA,
             "html_url": "https://github.example/acme/app/runs/1",
             "output": {"title": "2 failed", "summary": "test_export failed", "text": "AssertionError"}},
            {"id": 2, "name": "lint", "status": "queued", "conclusion": None, "head_sha": SHA, "html_url": None,
             "details_url": "https://ci.example/2", "output": {}},
        ]
        standin.statuses[SHA] = [{"context": "ci/jenkins", "state": "error", "target_url": "https://ci.example/3",
                                  "description": "Build errored"}]

        checks = client_of("github", standin, "acme/app").checks_list(ref=SHA)

    assert checks == [
        Check("tests", "completed", "failure", "https://github.example/acme/app/runs/1",
              "2 failed\n\ntest_export failed\n\nAssertionError"),
        Check("lint", "queued", None, "https://ci.example/2", ""),
        Check("ci/jenkins", "completed", "failure", "https://ci.example/3", "Build errored"),
    ]
    assert [check.failed() for check in checks] == [True, False, True] and standin.violations == []


def test_gitlab_checks_are_the_jobs_of_the_commits_latest_pipeline():
    with GitLabStandin(token=TOKEN) as standin:
        standin.pipeline_add(sha=SHA, status="success", jobs=[{"id": 1, "name": "old", "status": "success"}])
        standin.pipeline_add(sha=SHA, status="failed", jobs=[
            {"id": 2, "name": "rspec", "status": "failed", "web_url": "https://gitlab.example/-/jobs/2",
             "allow_failure": False, "failure_reason": "script_failure"},
            {"id": 3, "name": "lint", "status": "failed", "web_url": "https://gitlab.example/-/jobs/3",
             "allow_failure": True, "failure_reason": "script_failure"},
            {"id": 4, "name": "deploy", "status": "manual", "web_url": ""},
        ])
        client = client_of("gitlab", standin, "acme/platform/app")

        checks = client.checks_list(ref=SHA)
        none = client.checks_list(ref="b2" * 20)

    assert [(check.name, check.status, check.conclusion) for check in checks] == [
        ("rspec", "completed", "failure"), ("lint", "completed", "neutral"), ("deploy", "queued", None)]
    assert checks[0].summary == "script_failure" and none == [] and standin.violations == []


def test_a_gitlab_jobs_log_is_read_as_the_plain_text_the_api_serves():
    with GitLabStandin(token=TOKEN) as standin:
        standin.pipeline_add(sha=SHA, status="failed", jobs=[{"id": 2, "name": "rspec", "status": "failed"}])
        standin.traces[2] = "$ rspec\n1 example, 1 failure\n"
        client = client_of("gitlab", standin, "acme/platform/app")
        (check,) = client.checks_list(ref=SHA)

        log = client.check_log(check=check)
        with pytest.raises(ForgeError, match="404"):
            client.check_log(check=replace(check, log_ref="9"))

    assert check.log_ref == "2" and log == "$ rspec\n1 example, 1 failure\n"
    assert [request.path for request in standin.requested("GET", r".*/trace")] == [
        "/api/v4/projects/acme%2Fplatform%2Fapp/jobs/2/trace", "/api/v4/projects/acme%2Fplatform%2Fapp/jobs/9/trace"]


def test_gitea_checks_are_the_commits_statuses():
    with GiteaStandin(token=TOKEN) as standin:
        standin.statuses[SHA] = [
            {"id": 1, "status": "failure", "context": "woodpecker/test", "target_url": "https://ci.example/1",
             "description": "tests failed"},
            {"id": 2, "status": "pending", "context": "woodpecker/lint", "target_url": "", "description": ""},
        ]

        checks = client_of("gitea", standin, "acme/app").checks_list(ref=SHA)

    assert [(check.name, check.status, check.conclusion, check.failed()) for check in checks] == [
        ("woodpecker/test", "completed", "failure", True), ("woodpecker/lint", "in_progress", None, False)]
    assert standin.violations == []


def test_reviews_that_request_changes_come_with_their_line_comments(forge):
    name, standin, client = forge
    number = pull_request_made(name, standin, head="workgraph/run-1")
    if name == "github":
        standin.reviews[number] = [{"id": 80, "user": {"login": "bob"}, "body": "Handle empty rows.",
                                    "state": "CHANGES_REQUESTED", "html_url": "https://github.example/r/80",
                                    "commit_id": SHA}]
        standin.comments[number] = [{"id": 12, "pull_request_review_id": 80, "path": "src/export.py", "line": 3,
                                     "body": "None here.", "user": {"login": "bob"}, "html_url": ""}]
    elif name == "gitlab":
        standin.reviewers[number] = [{"user": {"id": 7, "username": "bob"}, "state": "requested_changes"}]
        standin.notes[number] = [
            {"id": 12, "type": "DiffNote", "body": "None here.", "author": {"username": "bob"}, "system": False,
             "position": {"new_path": "src/export.py", "new_line": 3}},
            {"id": 13, "type": None, "body": "added 1 commit", "author": {"username": "bot"}, "system": True}]
    else:
        standin.reviews[number] = [{"id": 80, "user": {"login": "bob"}, "body": "Handle empty rows.",
                                    "state": "REQUEST_CHANGES", "html_url": "", "commit_id": SHA, "dismissed": False}]
        standin.review_comments[80] = [{"id": 12, "path": "src/export.py", "position": 3, "body": "None here.",
                                        "user": {"login": "bob"}, "html_url": ""}]

    reviews = client.reviews_list(number=number)
    comments = client.review_comments_list(number=number)

    assert [(review.state, review.author) for review in reviews] == [("changes_requested", "bob")]
    assert [(comment.path, comment.line, comment.body) for comment in comments] == [("src/export.py", 3, "None here.")]


def test_a_refused_token_names_its_variable_and_a_forge_that_is_down_may_pass(forge):
    name, standin, client = forge
    wrong = client_of(name, standin, STANDINS[name][1], token="tok_wrong-value-0000")

    with pytest.raises(ForgeError) as refused:
        wrong.pull_request_find(head="workgraph/run-1", base="main")
    standin.violations.clear()  # the wrong token was the point
    standin.outage = (503, {"message": f"backend unavailable; token {TOKEN} not checked"})
    with pytest.raises(ForgeError) as down:
        client.pull_request_find(head="workgraph/run-1", base="main")

    assert refused.value.status == 401 and not refused.value.transient
    assert f"refused the token in {TOKEN_ENV} (forge_token_env)" in str(refused.value)
    assert "tok_wrong-value-0000" not in str(refused.value)
    assert down.value.status == 503 and down.value.transient
    assert TOKEN not in str(down.value) and f"token [{TOKEN_ENV}] not checked" in str(down.value)


def test_a_forge_that_cannot_be_reached_is_a_transient_failure():
    client = forge_client(forge="github", api_url="http://127.0.0.1:9", repo="acme/app",
                          token=Secret(TOKEN_ENV, TOKEN), timeout=5)

    with pytest.raises(ForgeError, match="Could not reach the GitHub API") as failed:
        client.checks_list(ref=SHA)

    assert failed.value.transient and failed.value.status is None
