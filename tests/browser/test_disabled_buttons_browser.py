"""In a real browser: a disabled button looks disabled (not the accent's fill, a not-allowed cursor) and
clicking it submits nothing."""

from __future__ import annotations

import pytest

from graphs.models import WorkGraphRun
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

STYLE = """(selector) => {
  const style = getComputedStyle(document.querySelector(selector));
  return {background: style.backgroundColor, cursor: style.cursor};
}"""
# An enabled button of the same kind, in a form of its own, for comparison: added to the page.
PROBE = """() => {
  const form = document.createElement('form');
  form.innerHTML = '<button type="submit" id="probe">Probe</button>';
  document.querySelector('main').append(form);
}"""
# Counts the form submissions the page attempts, and holds them: the test reads the count, not a reload.
SUBMITS_COUNTED = """() => {
  window.submits = 0;
  document.addEventListener('submit', (event) => { window.submits += 1; event.preventDefault(); }, true);
}"""


def test_run_pipeline_while_a_run_is_under_way_looks_and_acts_disabled(chromium, console_server, alice, task):
    nodes = [node("a")]
    planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="running")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    page.wait_for_selector("#run-pipeline[disabled]")

    page.evaluate(PROBE)
    disabled = page.evaluate(STYLE, "#run-pipeline")
    enabled = page.evaluate(STYLE, "#probe")
    assert (disabled["cursor"], enabled["cursor"]) == ("not-allowed", "pointer")
    assert disabled["background"] != enabled["background"], "not the accent's fill of an enabled button"

    page.evaluate(SUBMITS_COUNTED)
    page.locator("#run-pipeline").click(force=True)
    assert page.evaluate("() => window.submits") == 0
    page.locator("#probe").click()
    assert page.evaluate("() => window.submits") == 1, "the count sees what an enabled button submits"
    assert WorkGraphRun.objects.filter(task=task).count() == 1
