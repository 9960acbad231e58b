"""In a real browser against daphne: the task page follows its run without a reload — a Cancel whose
confirm dialog stays open while the page re-renders still cancels, "Run pipeline" is disabled with its
reason while the run is under way, a run that ends while the page is open shows its Outcome and
artifacts, the stale "pipeline has started" kind of message gone, and a run made elsewhere while none is
under way shows as a reload of the page shows it, found by the navigation's inbox socket."""

from __future__ import annotations

import time

import pytest

from graphs.models import WorkGraphRun
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, attempt_running, console_served, sign_in
from tests.browser.reloads import OpenPages
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

RENDERS = "() => Number(document.documentElement.dataset.liveRenders || 0)"


def _chain(length: int) -> dict:
    """``length`` nodes one after the other, each keeping an artifact, ending in a final verdict."""
    nodes = [node("n1", promotes_to_artifact={"artifact_type": "notes"})]
    nodes += [node(f"n{i}", f"n{i - 1}", promotes_to_artifact={"artifact_type": "notes"}) for i in range(2, length)]
    nodes.append(node("verdict", f"n{length - 1}", node_type="final_verdict",
                      promotes_to_artifact={"artifact_type": "verdict"}))
    return {"nodes": nodes, "edges": edges_for(nodes)}


@pytest.fixture
def paced_console(transactional_db):
    """The console served by daphne, each offline agent call lasting about a second: a run of two dozen
    nodes is under way long enough to keep a dialog open over it."""
    with console_served(WORKGRAPH_OFFLINE_CALL_SECONDS="1.0") as url:
        yield url


def _page(chromium):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    return page


def _wait_for(condition, *, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.1)


def test_cancel_confirmed_after_ten_seconds_of_open_dialog_cancels_the_run(chromium, paced_console, alice, task):
    run = planned_run(task, _chain(24))
    page = _page(chromium)
    sign_in(page, f"{paced_console}/tasks/{task.pk}/", "alice")
    page.click(f"#run-{run.run_id} button[data-action='start']")
    page.wait_for_selector(".message:has-text('The run has started.')")
    section = f"#run-{run.run_id}"
    page.wait_for_selector(f"{section}[data-run-status='running'] button[data-action='cancel']")
    attempt_running(run, "n2")

    page.click(f"{section} button[data-action='cancel']")
    page.locator("dialog.confirm-dialog[open]").wait_for()
    renders = page.evaluate(RENDERS)
    opened = time.monotonic()
    # Nodes end while the dialog is open: the page re-renders around the run, whose section waits.
    page.wait_for_function(f"() => ({RENDERS})() > {renders}")
    page.wait_for_selector(f"{section}[data-live-stale='true']")
    page.wait_for_timeout(max(0.0, 10.0 - (time.monotonic() - opened)) * 1000)
    assert page.evaluate(RENDERS) > renders
    assert WorkGraphRun.objects.get(pk=run.pk).status == "running", "the run went on while the dialog was open"
    page.screenshot(path=str(ARTIFACTS / "task-detail-cancel-held.png"), full_page=True)

    page.locator("dialog.confirm-dialog[open] button:has-text('Yes, do it')").click()
    page.wait_for_selector(".message:has-text('The run is being cancelled.')")
    _wait_for(lambda: WorkGraphRun.objects.get(pk=run.pk).status == "cancelled")


def test_a_run_that_ends_while_the_page_is_open_shows_its_outcome_and_artifacts(chromium, paced_console, alice, task):
    run = planned_run(task, _chain(4))
    page = _page(chromium)
    sign_in(page, f"{paced_console}/tasks/{task.pk}/", "alice")
    page.wait_for_selector("#task-outcome[hidden]", state="attached")
    page.click(f"#run-{run.run_id} button[data-action='start']")
    message = page.locator(".message:has-text('The run has started.')")
    message.wait_for()
    assert "No artifacts yet." in page.inner_text(f"#run-{run.run_id} [data-run-artifacts]")

    # Under way: no other run can be made, and the page says why.
    button = page.locator("#run-pipeline")
    page.wait_for_selector("#run-pipeline[disabled]")
    reason = page.locator("#run-refusal").inner_text()
    assert reason == "A run is under way: cancel it or wait for it to end."
    assert button.get_attribute("aria-describedby") == "run-refusal"

    page.wait_for_selector("#task-outcome:not([hidden]) [data-verdict]")
    assert page.inner_text("#task-outcome [data-verdict]") == "PASS"
    assert page.locator(f"#task-outcome [data-outcome-run='{run.run_id}']").count() == 1
    artifacts = page.locator(f"#run-{run.run_id} [data-run-artifacts] details.artifact")
    assert artifacts.count() == 4
    page.wait_for_selector("#run-pipeline:not([disabled])")
    assert page.locator("#run-refusal").count() == 0
    message.wait_for(state="detached")
    page.wait_for_selector("h1 .status[data-status='succeeded']")
    page.screenshot(path=str(ARTIFACTS / "task-detail-ended-live.png"), full_page=True)


def test_a_run_made_elsewhere_shows_as_a_reload_shows_it(chromium, console_server, alice, task):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_WAIT_MS)
    try:
        sign_in(context.new_page(), f"{console_server}/", "alice")
        pages = OpenPages(context)
        page = pages.open(f"{console_server}/tasks/{task.pk}/")
        page.wait_for_selector("#runs >> text=No runs yet.")
        renders = page.evaluate(RENDERS)

        # Made in the test's process: no event of it reaches the console, whose inbox socket finds it by
        # the fingerprint of Alice's runs it reads again every few seconds.
        run = planned_run(task, _chain(3), status="ready")
        page.wait_for_selector(f"#run-{run.run_id}[data-run-status='ready']")
        assert page.evaluate(RENDERS) > renders
        assert page.locator("#runs").get_attribute("data-live-runs") == str(run.run_id)
        pages.equal_to_reloads("a run made elsewhere")
    finally:
        context.close()
