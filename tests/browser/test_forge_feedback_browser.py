"""In a real browser against daphne in the embedded mode: a lead sets up delivery on the project's Delivery page
(a remote served by git http-backend, GitHub's stand-in as its forge, the token's and the webhook secret's
variables by name); the task's pipeline of the offline agent opens its pull request; the stand-in's CI then
reports a failing check through a webhook signed as GitHub signs it, posted to the live console; a follow-up
run appears on the task page, and its fix is pushed to the same branch: the bare repository's branch and the
pull request's head move to the follow-up's commit, and no second pull request is opened."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from playwright.sync_api import expect

from graphs.models import ForgeFeedback, RunDelivery, WorkGraphRun
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, console_served, sign_in
from tests.browser.deliveries import delivery_page_saved
from tests.deliveries import HOOK_SECRET, SECRET_ENV, TOKEN, TOKEN_ENV, remote_head, served_remote
from tests.forge_events import github_check_run, signed_headers

pytestmark = pytest.mark.django_db(transaction=True)


def settled(run_of, *, timeout: float = 120) -> RunDelivery:
    """The delivery of the run ``run_of()`` finds, once it has settled."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = run_of()
        found = RunDelivery.objects.filter(run=run).first() if run else None
        if found is not None and found.is_settled():
            return found
        time.sleep(0.2)
    pytest.fail(f"no delivery settled in {timeout} s")


def test_a_failing_check_comes_back_as_a_follow_up_whose_fix_reaches_the_pull_request(
        chromium, repo, project, alice, tmp_path):
    task = factories.TaskFactory(project=project, created_by=alice, title="Nightly CSV export")
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)

    with served_remote(project, repo, tmp_path / "served") as served, \
            console_served(WORKGRAPH_FORGE_SECRET_ENV=f"{TOKEN_ENV},{SECRET_ENV}", WORKGRAPH_FORGE_POLL_SECONDS="0",
                           **{TOKEN_ENV: TOKEN, SECRET_ENV: HOOK_SECRET}) as console:
        sign_in(page, f"{console}/login/?next=/projects/{project.slug}/", "alice")
        delivery_page_saved(page, served, webhook_secret_env=SECRET_ENV)

        page.goto(f"{console}/tasks/{task.pk}/")
        page.click("#run-pipeline")
        first = settled(lambda: WorkGraphRun.objects.filter(task=task).order_by("created_at").first())
        assert first.state == "opened", first.error

        payload = github_check_run(name="tests", head_sha=first.head_commit, branch=first.remote_branch,
                                   number=first.pull_request_number, summary="1 failed, 12 passed",
                                   text="FAILED tests/test_export.py::test_quotes - AssertionError")
        body = json.dumps(payload).encode()
        answer = httpx.post(f"{console}/api/forge/{project.slug}/events", content=body, timeout=30,
                            headers={**signed_headers("github", "check_run", body, HOOK_SECRET),
                                     "Content-Type": "application/json"})
        assert answer.status_code == 202, answer.text
        assert "follow-up run" in answer.json()["outcome"]

        feedback = ForgeFeedback.objects.get()
        follow_up = settled(lambda: ForgeFeedback.objects.get().follow_up_run)
        page.reload()
        item = page.locator(f"#delivery-{first.run_id} [data-forge-feedback=started]")
        expect(item).to_contain_text("The check \u201ctests\u201d failed")
        item.locator("[data-follow-up-run]").click()
        expect(page).to_have_url(f"{console}/runs/{follow_up.run_id}/")
        page.goto(f"{console}/tasks/{task.pk}/")
        expect(page.locator(f"#delivery-{follow_up.run_id} [data-delivery-state]")).to_have_text("Pull request open")
        page.screenshot(path=str(ARTIFACTS / "forge-feedback-task-page.png"), full_page=True)
        pull = httpx.get(f"{served.github.api_url}/repos/acme/app/pulls/{first.pull_request_number}", timeout=10,
                         headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/vnd.github+json",
                                  "X-GitHub-Api-Version": "2022-11-28"}).json()

    assert feedback.source_run_id == first.run_id and feedback.outcome == "started"
    assert follow_up.state == "opened", follow_up.error
    assert follow_up.remote_branch == first.remote_branch
    assert follow_up.pull_request_number == first.pull_request_number and len(served.github.pulls) == 1
    assert follow_up.head_commit != first.head_commit
    assert remote_head(served.remote, first.remote_branch) == follow_up.head_commit == pull["head"]["sha"]
    assert served.github.violations == []
