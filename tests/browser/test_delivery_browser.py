"""In a real browser against daphne in the embedded mode: a lead sets up delivery on the project's Delivery page
(a remote served by git http-backend behind basic auth, GitHub's stand-in as its forge, the token's variable by
name), runs the task's pipeline with the offline agent, and the task page then shows the run's pull request open
on the forge, linked."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from graphs.models import RunDelivery, WorkGraphRun
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, console_served, sign_in
from tests.browser.deliveries import delivery_page_saved
from tests.deliveries import TOKEN, TOKEN_ENV, served_remote

pytestmark = pytest.mark.django_db(transaction=True)


def delivered(task, *, timeout: float = 120) -> RunDelivery:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = WorkGraphRun.objects.filter(task=task).first()
        found = RunDelivery.objects.filter(run=run).first() if run else None
        if found is not None and found.is_settled():
            return found
        time.sleep(0.2)
    pytest.fail(f"no delivery of {task} settled in {timeout} s")


def test_a_lead_sets_up_delivery_and_a_run_opens_its_pull_request(chromium, repo, project, alice, tmp_path):
    task = factories.TaskFactory(project=project, created_by=alice, title="Nightly CSV export")
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)

    with served_remote(project, repo, tmp_path / "served") as served, \
            console_served(WORKGRAPH_FORGE_SECRET_ENV=TOKEN_ENV, **{TOKEN_ENV: TOKEN}) as console:
        sign_in(page, f"{console}/login/?next=/projects/{project.slug}/", "alice")
        delivery_page_saved(page, served)
        page.screenshot(path=str(ARTIFACTS / "delivery-settings.png"), full_page=True)

        page.goto(f"{console}/tasks/{task.pk}/")
        page.click("#run-pipeline")
        delivery = delivered(task)
        page.reload()

        state = page.locator(f"#delivery-{delivery.run_id} [data-delivery-state]")
        expect(state).to_have_text("Pull request open")
        link = page.locator(f"#delivery-{delivery.run_id} [data-delivery-pull-request]")
        expect(link).to_have_attribute("href", delivery.pull_request_url)
        page.screenshot(path=str(ARTIFACTS / "delivery-task-page.png"), full_page=True)

    assert delivery.state == "opened", delivery.error
    (pull,) = served.github.pulls
    assert (pull["title"], pull["head"]["ref"]) == ("Nightly CSV export", delivery.remote_branch)
    assert served.github.violations == []
