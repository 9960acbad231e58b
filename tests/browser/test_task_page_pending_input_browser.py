"""In a real browser against daphne: a half-typed Reject comment on the task page survives the page's live
re-renders — its run waits, marked stale, while the rest of the page follows — and Reject then sends it."""

from __future__ import annotations

import time

import pytest
from django.db.models import F

from graphs.models import WorkGraphRun
from tests.browser.conftest import PAGE_WAIT_MS, RunSnapshots, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

RENDERS = "() => Number(document.documentElement.dataset.liveRenders || 0)"


def test_a_half_typed_reject_comment_survives_a_re_render(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="awaiting_approval")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    snapshots = RunSnapshots(page, run.run_id)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    section = f"#run-{run.run_id}"
    comment = page.locator(f"{section} input[name=comment]")
    comment.fill("The plan skips the export's size limit")
    page.locator("h1").click()  # the field loses the focus; its typed text alone holds the section
    renders = page.evaluate(RENDERS)
    snapshots.wait_for(1)

    # The run changes without an event reaching the page: its socket's next snapshot makes it re-render.
    WorkGraphRun.objects.filter(pk=run.pk).update(manifest_version=F("manifest_version") + 1)
    page.wait_for_function(f"() => ({RENDERS})() > {renders}")
    page.wait_for_selector(f"{section}[data-live-stale='true']")
    assert comment.input_value() == "The plan skips the export's size limit"

    page.click(f"{section} button[data-action='reject']")
    page.locator("dialog.confirm-dialog[open] button:has-text('Yes, do it')").click()
    deadline = time.monotonic() + 20
    while WorkGraphRun.objects.get(pk=run.pk).status != "rejected":
        assert time.monotonic() < deadline, "the rejection did not arrive"
        time.sleep(0.1)
    assert WorkGraphRun.objects.get(pk=run.pk).review_comment == "The plan skips the export's size limit"
