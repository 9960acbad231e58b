"""In a real browser against daphne: from the run graph's node panel, a lead opens "Re-run from here with
an edit…", edits the node's prompt and submits; the fork runs with the edited prompt (the agent is sent
it) and the compare page between the fork and its source shows the edit as a diff."""

from __future__ import annotations

import time

import pytest

from graphs.models import WorkGraphRun
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, build_and_check_finished, no_sideways_scroll, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

EDIT = "Check the CSV export only, and list what you ran."


def fork_finished(source: WorkGraphRun, *, timeout: float = 30.0) -> WorkGraphRun:
    """Wait for the fork of ``source`` to end; return it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fork = WorkGraphRun.objects.filter(forked_from=source).first()
        if fork is not None and fork.is_finished():
            return fork
        time.sleep(0.1)
    raise AssertionError("the fork did not finish")


@pytest.fixture
def finished(task):
    return build_and_check_finished(task)


def test_a_lead_edits_a_nodes_prompt_the_fork_runs_it_and_compare_shows_the_diff(
    chromium, console_server, alice, finished
):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{finished.run_id}/?node=check", "alice")

    page.locator("#panel form.fork-node a[data-fork-edit]").click()
    page.wait_for_url(f"**/runs/{finished.run_id}/fork/edit/?node=check")
    prompt = page.locator("textarea[name=prompt]")
    assert prompt.input_value() == "Check everything."
    prompt.fill("")
    page.locator("#fork-edit-form button[type=submit]").click()
    assert page.locator("#error-prompt").inner_text() == "The prompt cannot be empty."
    assert WorkGraphRun.objects.count() == 1

    page.locator("textarea[name=prompt]").fill(EDIT)
    page.screenshot(path=str(ARTIFACTS / "fork-edit.png"), full_page=True)
    no_sideways_scroll(page)
    page.locator("#fork-edit-form button[type=submit]").click()
    page.wait_for_url(lambda url: "/fork/" not in url and f"/runs/{finished.run_id}/" not in url)

    fork = fork_finished(finished)
    assert fork.status == "succeeded"
    check = fork.executions.get(node_id="check", cause="fork")
    assert EDIT in check.input_payload["prompt"]
    assert fork.executions.get(node_id="build").output_payload["reused_from"]

    page.goto(f"{console_server}/runs/{finished.run_id}/compare/{fork.run_id}/")
    edit = page.locator("#fork-edit")
    assert "check" in edit.locator("h2").inner_text()
    changed = edit.locator("tr.changed").first
    assert changed.locator("td.old").inner_text() == "Check everything."
    assert changed.locator("td.new").inner_text() == EDIT
    page.screenshot(path=str(ARTIFACTS / "fork-edit-compare.png"), full_page=True)
    no_sideways_scroll(page)
