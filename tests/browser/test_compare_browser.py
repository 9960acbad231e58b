"""In a real browser against daphne: two attempts of a node compared side by side, reached from the node
page and from the run graph's node panel; two runs of a task compared, reached from the task page; both
pages on a phone's width without sideways scrolling, agent text drawn as text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from graphs.models import WorkGraphRun, WorkNodeExecution
from tests.browser.conftest import ARTIFACTS, OVERFLOW, PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = '<img src=x onerror="window.pwned = true">'
START = datetime(2025, 6, 1, 10, tzinfo=UTC)
# One long word: it must wrap inside its column, not push the page sideways.
LONG_WORD = "https://example.test/" + "a" * 200


def attempt(run, number: int, *, node_id: str = "draft", output: str, status: str = "succeeded", **extra):
    return WorkNodeExecution.objects.create(
        run=run, node_id=node_id, subagent_type="planner", attempt=number, status=status,
        input_payload={"prompt": f"Write the draft.{' Feedback: too short.' if number > 1 else ''}"},
        output_payload={"text": output}, started_at=START, finished_at=START + timedelta(seconds=number * 2),
        **extra,
    )


@pytest.fixture
def attempts(task):
    run = planned_run(task, {"nodes": [node("draft")], "edges": []}, status="succeeded")
    first = attempt(run, 1, output=f"Title\nShort body\n{HOSTILE}", status="failed",
                    judgment_result={"ok": False, "issues": ["too short"]})
    second = attempt(run, 2, output=f"Title\nA longer body\n{LONG_WORD}\nThe end", cause="retry_self",
                     judgment_result={"ok": True, "issues": []})
    return run, first, second


def _no_sideways_scroll(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate(OVERFLOW)
    page.screenshot(path=str(ARTIFACTS / f"{name}-390.png"), full_page=True)
    assert overflow["scroll"] <= 0, overflow


def test_two_attempts_compare_side_by_side_from_the_node_page(chromium, console_server, alice, attempts):
    _, first, second = attempts
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{second.pk}/", "alice")
    page.click("a[data-compare-with='1']")
    page.wait_for_url(f"**/executions/{first.pk}/compare/{second.pk}/")

    output = page.locator("#compare-output")
    assert output.locator("[data-diff-summary]").inner_text() == "+3 \N{MINUS SIGN}2 lines"
    changed = output.locator("tr.changed").first
    assert changed.locator("td.old").inner_text() == "Short body"
    assert changed.locator("td.new").inner_text() == "A longer body"
    assert HOSTILE in output.inner_text()
    assert page.locator("#compare-output img").count() == 0 and page.evaluate("window.pwned === undefined")
    assert page.locator("#compare-input").get_attribute("data-identical") == "true"
    assert '"too short"' in " ".join(page.locator("#compare-judgment td.old").all_inner_texts())
    facts = page.locator("[data-compare-facts] tbody tr").first.inner_text()
    assert "failed" in facts and "succeeded" in facts
    page.screenshot(path=str(ARTIFACTS / "compare-attempts.png"), full_page=True)
    _no_sideways_scroll(page, "compare-attempts")


def test_the_run_graphs_node_panel_links_each_earlier_attempt_to_compare(chromium, console_server, alice, attempts):
    run, first, second = attempts
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{run.run_id}/?node=draft", "alice")
    link = page.locator("#panel .attempts li[data-attempt='1'] a:has-text('compare with latest')")
    link.wait_for()
    assert page.locator("#panel .attempts li[data-attempt='2'] a:has-text('compare')").count() == 0
    link.click()
    page.wait_for_url(f"**/executions/{first.pk}/compare/{second.pk}/")
    assert "attempt 1 ↔ attempt 2" in page.locator("h1").inner_text()


def test_two_runs_of_a_task_compare_from_the_task_page(chromium, console_server, alice, task):
    older = planned_run(task, {"nodes": [node("brief"), node("draft", "brief"), node("dropped")], "edges": []},
                        status="failed")
    newer = planned_run(task, {"nodes": [node("brief"), node("draft", "brief"), node("extra", "draft")], "edges": []},
                        status="succeeded")
    WorkGraphRun.objects.filter(pk=older.pk).update(created_at=START)
    WorkGraphRun.objects.filter(pk=newer.pk).update(created_at=START + timedelta(hours=1))
    attempt(older, 1, node_id="brief", output="b", agent_calls=1, cost_usd=Decimal("0.0300"))
    attempt(older, 1, node_id="draft", output="d", status="failed")
    attempt(newer, 1, node_id="brief", output="b", agent_calls=1, cost_usd=Decimal("0.0100"))
    attempt(newer, 2, node_id="draft", output="d")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{task.pk}/", "alice")
    assert page.locator(f"#run-{older.run_id} [data-compare-previous]").count() == 0
    page.click(f"#run-{newer.run_id} [data-compare-previous]")
    page.wait_for_url(f"**/runs/{older.run_id}/compare/{newer.run_id}/")

    rows = page.locator("#node-compare tbody tr")
    assert rows.evaluate_all("rows => rows.map(r => [r.dataset.nodeId, r.dataset.presence])") == [
        ["brief", "both"], ["draft", "both"], ["dropped", "removed"], ["extra", "added"]]
    draft = page.locator("#node-compare tr[data-node-id='draft']")
    assert draft.get_attribute("data-status-changed") is not None
    assert "failed" in draft.locator("td[data-side='old']").inner_text()
    assert "succeeded" in draft.locator("td[data-side='new']").inner_text()
    assert draft.locator("[data-duration-change]").inner_text() == "+2.0 s"
    assert "(\N{MINUS SIGN}$0.0200)" in page.locator("[data-cost-change]").inner_text()
    page.screenshot(path=str(ARTIFACTS / "compare-runs.png"), full_page=True)
    _no_sideways_scroll(page, "compare-runs")

    page.set_viewport_size({"width": 1280, "height": 900})
    draft.locator("a:has-text('compare attempts')").click()
    page.wait_for_selector("#compare-output")
    assert "run of" in page.locator("[data-compare-facts] thead").inner_text()
