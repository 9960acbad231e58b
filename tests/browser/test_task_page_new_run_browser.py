"""In a real browser against daphne: a run of the task made elsewhere (another tab, the API) while none is
under way shows on the open task page without a reload, and the page follows it."""

from __future__ import annotations

import pytest

from graphs.engine import run_wait_finished
from graphs.models import WorkGraphRun
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_run_made_elsewhere_shows_on_the_open_page(chromium, console_server, alice, task):
    first = planned_run(task, {"nodes": [node("a")], "edges": []}, status="succeeded")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    page.wait_for_selector(f"#run-{first.run_id}")

    csrf = next(cookie["value"] for cookie in page.context.cookies() if cookie["name"] == "csrftoken")
    page.request.post(f"{console_server}/tasks/{task.pk}/pipeline/", form={"csrfmiddlewaretoken": csrf},
                      max_redirects=0)
    second = WorkGraphRun.objects.filter(task=task).exclude(pk=first.pk).get()
    page.wait_for_selector(f"#runs > #run-{second.run_id} + #earlier-runs + #run-{first.run_id}")
    # The pipeline's own pace is the engine's (a loaded machine slows it); what this test means is that the
    # open page follows the run to its end once the run is there.
    assert run_wait_finished(run_id=second.run_id, timeout=600).status == "succeeded"
    page.wait_for_selector(f"#run-{second.run_id}[data-run-status='succeeded']")
    page.wait_for_selector("h1 .status[data-status='succeeded']")
