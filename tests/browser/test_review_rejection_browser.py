"""In a real browser against daphne: a reviewer rejects a plan from the task page. An empty comment is
refused at the field before any confirmation; with a reason, once confirmed, the plan reads "rejected" —
in its own colour — on the task page, in the runs list and its filter, and in the API."""

from __future__ import annotations

import pytest

from graphs.models import WorkGraphRun
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

REASON_NEEDED = "Say why it is rejected: a rejection needs a comment, its reason."
CHIP_COLOURS = """status => {
  const chip = document.createElement('span');
  chip.className = `status status-${status}`;
  document.body.append(chip);
  const style = getComputedStyle(chip);
  const seen = [style.color, style.backgroundColor];
  chip.remove();
  return seen;
}"""


def _chip_colours(page, status: str) -> list[str]:
    """The text and ground colours of a status chip, as the page's style sheet gives them."""
    return page.evaluate(CHIP_COLOURS, status)


def test_a_plan_rejected_on_the_task_page_reads_rejected_everywhere(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("spec"), node("impl", "spec")], "edges": []},
                      status="awaiting_approval")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    controls = page.locator(f"[data-run-controls='{run.pk}'] form.review-controls").first

    controls.locator("button[data-action='reject']").click()
    said = controls.locator("[data-needs-error]")
    said.wait_for()
    assert said.inner_text() == REASON_NEEDED
    assert page.locator("dialog.confirm-dialog[open]").count() == 0, "no confirmation before the reason"
    assert page.evaluate("document.activeElement.name") == "comment"
    assert WorkGraphRun.objects.get(pk=run.pk).status == "awaiting_approval"

    controls.locator("input[name=comment]").fill("the plan skips the tests")
    assert said.count() == 0, "the error goes once a reason is typed"
    controls.locator("button[data-action='reject']").click()
    page.locator("dialog.confirm-dialog[open]").wait_for()
    page.click("dialog.confirm-dialog button[value='go']")
    # The form returns to the page it was on, which says so.
    page.locator(".messages >> text=Plan rejected: the run ends rejected.").wait_for()
    run.refresh_from_db()
    assert (run.status, run.review_decision, run.review_comment) == ("rejected", "rejected",
                                                                     "the plan skips the tests")

    page.goto(f"{console_server}/tasks/{task.pk}/")
    heading = page.locator("h1 .status")
    assert (heading.get_attribute("data-status"), heading.inner_text()) == ("rejected", "rejected")

    page.goto(f"{console_server}/runs/")
    page.select_option("select[name=status]", "rejected")
    page.click(".run-filters button[type=submit]")
    page.wait_for_url("**/runs/?*status=rejected*")
    chip = page.locator(f"tr[data-run-id='{run.pk}'] [data-run-status] .status")
    assert chip.inner_text() == "rejected"
    page.screenshot(path=str(ARTIFACTS / "runs-list-rejected.png"), full_page=True)
    colours = {status: _chip_colours(page, status) for status in ("rejected", "failed", "cancelled")}
    assert colours["rejected"] != colours["failed"] and colours["rejected"] != colours["cancelled"], colours

    answer = page.request.get(f"{console_server}/api/runs/{run.pk}")
    assert answer.json()["status"] == "rejected"
    listed = page.request.get(f"{console_server}/api/runs?status=rejected").json()
    assert [item["run_id"] for item in listed["items"]] == [str(run.pk)]


def test_rejected_has_its_own_colour_in_the_dark_too(chromium, console_server, alice, task):
    page = chromium.new_page(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    sign_in(page, f"{console_server}/runs/", "alice")
    colours = [_chip_colours(page, status) for status in ("rejected", "failed")]
    assert colours[0] != colours[1]
    assert colours[0] == ["rgb(249, 168, 212)", "rgb(59, 16, 41)"]
