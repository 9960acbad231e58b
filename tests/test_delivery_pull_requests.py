"""A run that succeeds in a project that delivers pull requests has its branch pushed to the remote and its pull
request opened on each forge's stand-in — GitHub, GitLab, Gitea — from the run's branch into the base branch,
titled with the task, its body the server's; an open pull request for the branch is reused, whoever opened it,
and delivering again opens no second one."""

from __future__ import annotations

import pytest

from graphs.delivery.deliveries import run_delivery_request
from graphs.models import RunWorkspace
from tests.deliveries import (
    TOKEN,
    TOKEN_ENV,
    delivering,
    delivery_of,
    remote_head,
    succeeded_run,
)
from tests.standins.gitea_api import GiteaStandin
from tests.standins.github_api import GitHubStandin
from tests.standins.gitlab_api import GitLabStandin

pytestmark = pytest.mark.django_db
FORGES = {
    "github": (GitHubStandin, "acme/app", "pulls", "body"),
    "gitlab": (GitLabStandin, "acme/platform/app", "merge_requests", "description"),
    "gitea": (GiteaStandin, "acme/app", "pulls", "body"),
}


@pytest.fixture(params=sorted(FORGES))
def forge(request, bare_remote, forge_token):
    kind, repo, _, _ = FORGES[request.param]
    with kind(token=TOKEN, remote=bare_remote) as standin:
        yield request.param, standin, repo
    assert standin.violations == []


def delivers_pull_requests(project, bare_remote, name, standin, repo):
    return delivering(project, deliver="pull_request", remote_url=str(bare_remote), forge=name,
                      forge_api_url=standin.api_url, forge_repo=repo, forge_token_env=TOKEN_ENV)


def opened_on(name: str, standin) -> list[dict]:
    return getattr(standin, FORGES[name][2])


def test_a_run_that_succeeds_opens_its_pull_request_from_its_branch_into_the_base(
        forge, repo_task, bare_remote, scripted_runner, inline_executor, django_capture_on_commit_callbacks):
    name, standin, repo = forge
    delivers_pull_requests(repo_task.project, bare_remote, name, standin, repo)

    run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)

    delivery = delivery_of(run)
    workspace = RunWorkspace.objects.get(run=run)
    assert delivery.state == "opened", delivery.error
    assert (delivery.remote_branch, delivery.head_commit) == (workspace.branch, workspace.head_commit)
    assert remote_head(bare_remote, workspace.branch) == workspace.head_commit
    (opened,) = opened_on(name, standin)
    source, target = ("source_branch", "target_branch") if name == "gitlab" else ("head", "base")
    heads = (opened[source], opened[target]) if name == "gitlab" else (opened[source]["ref"], opened[target]["ref"])
    assert heads == (workspace.branch, "main")
    assert opened["title"] == repo_task.title
    assert repo_task.goal_text.split()[0] in opened[FORGES[name][3]]
    number = opened["iid"] if name == "gitlab" else opened["number"]
    url = opened["web_url"] if name == "gitlab" else opened["html_url"]
    assert (delivery.pull_request_number, delivery.pull_request_url) == (number, url)
    assert run.status == "succeeded" and delivery.error == "" and delivery.attempts == 1


def test_an_open_pull_request_for_the_branch_is_reused_and_delivering_again_opens_none(
        forge, repo_task, bare_remote, scripted_runner, inline_executor, alice, django_capture_on_commit_callbacks):
    name, standin, repo = forge
    run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)
    branch = RunWorkspace.objects.get(run=run).branch
    if name == "gitlab":
        theirs = standin.merge_request_add(source=branch, target="main")["iid"]
    else:
        theirs = standin.pull_request_add(head=branch, base="main")["number"]
    delivers_pull_requests(repo_task.project, bare_remote, name, standin, repo)

    run_delivery_request(run=run, by=alice)
    inline_executor.drain()
    first = delivery_of(run)
    run_delivery_request(run=run, by=alice)
    inline_executor.drain()
    again = delivery_of(run)

    assert (first.state, first.pull_request_number) == ("opened", theirs), first.error
    assert (again.state, again.pull_request_number) == ("opened", theirs)
    assert len(opened_on(name, standin)) == 1
    assert [request.method for request in standin.requests].count("POST") == 0


def test_push_only_pushes_and_asks_the_forge_nothing(forge, repo_task, bare_remote, scripted_runner, inline_executor,
                                                    django_capture_on_commit_callbacks):
    name, standin, repo = forge
    delivers_pull_requests(repo_task.project, bare_remote, name, standin, repo)
    repo_task.project.delivery.deliver = "push"
    repo_task.project.delivery.save()

    run = succeeded_run(repo_task, scripted_runner, inline_executor, django_capture_on_commit_callbacks)

    delivery = delivery_of(run)
    assert (delivery.state, delivery.pull_request_number) == ("pushed", None)
    assert remote_head(bare_remote, delivery.remote_branch) == delivery.head_commit
    assert standin.requests == []
