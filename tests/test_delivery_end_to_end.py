"""A task run end to end in a project that delivers: in the embedded mode — the offline agent, the serving
process's thread pool — its pipeline succeeds, and with nothing more asked the console pushes the run's branch
over HTTP to a bare repository served by git http-backend behind basic auth and opens its pull request on
GitHub's stand-in; in the distributed mode, the delivery is a job a real Celery worker runs."""

from __future__ import annotations

import time

import pytest

from graphs.engine import pipeline_start, run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import RunDelivery, RunWorkspace
from tests import factories
from tests.celery_worker import wait_until
from tests.deliveries import TOKEN, TOKEN_ENV, delivering, remote_head, served_remote
from tests.git_http_server import bare_repository
from tests.repos import git


def settled(run_id, *, timeout: float) -> RunDelivery:
    """The run's delivery once it is no longer pending (fails the test past ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = RunDelivery.objects.filter(run_id=run_id).first()
        if found is not None and found.is_settled():
            return found
        time.sleep(0.1)
    pytest.fail(f"the delivery of {run_id} did not settle in {timeout} s: {RunDelivery.objects.filter(run_id=run_id)}")


@pytest.mark.django_db(transaction=True)
def test_a_run_that_succeeds_in_the_embedded_mode_is_delivered_as_a_pull_request(
        repo, project, alice, forge_token, tmp_path, settings):
    settings.WORKGRAPH_AGENT = "offline"
    task = factories.TaskFactory(project=project, created_by=alice, goal_text="Export the monthly report as CSV.")
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        with served_remote(project, repo, tmp_path / "served") as served:
            delivering(project, deliver="pull_request", remote_url=served.url, forge="github",
                       forge_api_url=served.github.api_url, forge_repo="acme/app", forge_token_env=TOKEN_ENV)

            run = run_wait_finished(run_id=pipeline_start(task=task).run_id, timeout=120)
            delivery = settled(run.run_id, timeout=60)
    finally:
        executor_set(previous)

    workspace = RunWorkspace.objects.get(run=run)
    assert run.status == "succeeded", run.error
    assert (delivery.state, delivery.error, delivery.trigger) == ("opened", "", "succeeded")
    assert remote_head(served.remote, workspace.branch) == workspace.head_commit != workspace.base_commit
    (pull,) = served.github.pulls
    assert (pull["head"]["ref"], pull["base"]["ref"], pull["title"]) == (workspace.branch, "main", task.title)
    assert pull["body"].startswith("Export the monthly report as CSV.") and "**Validator**" in pull["body"]
    assert (delivery.pull_request_number, delivery.pull_request_url) == (pull["number"], pull["html_url"])
    assert served.github.violations == [] and TOKEN not in git(repo, "config", "--list")


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_run_that_succeeds_on_a_celery_worker_is_delivered_by_a_celery_job(repo, project, alice, tmp_path, workers):
    remote = bare_repository(tmp_path, "remote.git")
    project.target_folder, project.allow_commands = str(repo), True
    project.save(update_fields=["target_folder", "allow_commands"])
    delivering(project, remote_url=f"file://{remote}")
    task = factories.TaskFactory(project=project, created_by=alice)
    worker = workers("deliver", WORKGRAPH_AGENT="offline", WORKGRAPH_OFFLINE_LINE_DELAY="0")

    run_id = pipeline_start(task=task).run_id
    wait_until(lambda: RunDelivery.objects.filter(run_id=run_id, state__in=["pushed", "failed"]).exists(),
               timeout=120, message=lambda: f"no delivery settled:\n{worker.log_text()[-4000:]}")

    delivery = RunDelivery.objects.get(run_id=run_id)
    workspace = RunWorkspace.objects.get(run_id=run_id)
    assert (delivery.state, delivery.error) == ("pushed", "")
    assert remote_head(remote, workspace.branch) == workspace.head_commit
