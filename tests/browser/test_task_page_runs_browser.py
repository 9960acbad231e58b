"""In a real browser against daphne: a task with several runs shows the latest open and the earlier ones
folded under it, each with its own artifacts, and an Outcome that keeps the PASS of an earlier run in view,
with its evidence one click away, when the latest run was cancelled."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from graphs.models import WorkNodeExecution
from graphs.runs.status import task_status_refresh
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.test_pages_task_runs import _ended_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_earlier_runs_fold_and_a_cancelled_rerun_keeps_the_pass_in_view(chromium, console_server, alice, task):
    now = timezone.now()
    passed = _ended_run(task, status="succeeded", verdict="pass", created_at=now - timedelta(hours=1), attempts=2)
    cancelled = _ended_run(task, status="cancelled", verdict=None, created_at=now)
    task_status_refresh(task_id=task.pk)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")

    latest, earlier = page.locator(f"#run-{cancelled.run_id}"), page.locator(f"#run-{passed.run_id}")
    assert latest.locator("details[data-run-body]").get_attribute("open") is not None
    assert earlier.locator("details[data-run-body]").get_attribute("open") is None
    assert not earlier.locator("[data-run-artifacts]").is_visible()
    earlier.locator("details[data-run-body] > summary").click()
    artifacts = earlier.locator("[data-run-artifacts] details.artifact")
    artifacts.first.wait_for()
    assert artifacts.count() == 1, "one artifact per node and type, not one per attempt"
    assert latest.locator("[data-run-artifacts] details.artifact").count() == 1

    outcome = page.locator("#task-outcome")
    assert outcome.locator(".status").first.get_attribute("data-status") == "cancelled"
    assert outcome.locator("[data-last-verdict] strong").inner_text() == "PASS"
    page.screenshot(path=str(ARTIFACTS / "task-detail-several-runs.png"), full_page=True)
    outcome.locator("[data-last-verdict] a[data-evidence]").click()
    evidence = WorkNodeExecution.objects.get(run=passed, node_id="verdict")
    page.wait_for_url(f"**/executions/{evidence.pk}/")
