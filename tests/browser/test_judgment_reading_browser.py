"""In a real browser: a failed attempt's judgment reads as a fail chip with its issues as a list, its
failure category in words with evidence and confidence, the raw JSON folded one click away and the
worker among the technical details — on the node page and in the run graph's side panel, all as text."""

from __future__ import annotations

import pytest

from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = '<img src=x onerror="window.pwned = true">'
JUDGMENT = {"ok": False, "kind": "command", "issues": ["2 tests failed", HOSTILE], "exit_code": 1,
            "command": ["pytest", "-q"]}
FAILURE = {"category": "TestBug", "confidence": 0.6, "evidence": ["ERROR collecting tests/test_x.py"],
           "rule": "collection_error", "note": ""}


@pytest.fixture
def failed_attempt(task):
    run = planned_run(task, {"nodes": [node("bench")], "edges": []}, status="failed")
    return factories.ExecutionFactory(run=run, node_id="bench", status="failed", judgment_result=JUDGMENT,
                                      failure=FAILURE, worker="host-7:4242:9f8e", error="judgment failed")


def test_the_node_page_reads_a_failed_judgment_in_words(chromium, console_server, alice, failed_attempt):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{failed_attempt.pk}/", "alice")
    judgment = page.locator("#judgment")
    assert judgment.locator(".verdict").inner_text() == "fail"
    assert "judged by a command's exit code" in judgment.inner_text()
    assert judgment.locator("ul.issues li").all_inner_texts() == ["2 tests failed", HOSTILE]
    raw = judgment.locator("details.raw")
    assert raw.get_attribute("open") is None
    raw.locator("summary").click()
    assert '"exit_code": 1' in raw.locator("pre").inner_text()

    failure = page.locator(".facts .failure")
    assert failure.locator("strong").inner_text() == "The test itself is broken"
    assert "TestBug · likely (confidence 0.60)" in failure.inner_text()
    assert failure.locator(".evidence li").all_inner_texts() == ["ERROR collecting tests/test_x.py"]

    facts = page.locator(".facts dl").first.inner_text()
    assert "host-7" not in facts, "the worker id is a technical detail"
    technical = page.locator("#technical")
    assert technical.get_attribute("open") is None
    technical.locator("summary").click()
    assert "host-7:4242:9f8e" in technical.inner_text()
    assert "rule collection_error" in technical.inner_text()
    assert page.locator("img").count() == 0 and page.evaluate("window.pwned === undefined")
    page.screenshot(path=str(ARTIFACTS / "node-judgment-reading.png"), full_page=True)


def test_the_side_panel_reads_a_failed_judgment_in_words(chromium, console_server, alice, failed_attempt):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/runs/{failed_attempt.run_id}/?node=bench", "alice")
    page.wait_for_function("() => document.getElementById('panel-body').dataset.state === 'failed'")
    panel = page.locator("#panel-body")
    assert panel.locator(".judgment-reading .verdict").inner_text() == "fail"
    assert panel.locator(".judgment-reading ul.issues li").all_inner_texts() == ["2 tests failed", HOSTILE]
    assert panel.locator(".failure strong").inner_text() == "The test itself is broken"
    assert "likely (confidence 0.60)" in panel.locator(".failure").inner_text()
    assert panel.locator(".attempts .tag[data-category='TestBug']").inner_text() == "the test itself is broken"
    assert panel.locator(".judgment-reading details.raw").get_attribute("open") is None
    assert "host-7" not in panel.locator("> p").first.inner_text()
    assert panel.locator("img").count() == 0 and page.evaluate("window.pwned === undefined")
    page.screenshot(path=str(ARTIFACTS / "run-graph-panel-judgment.png"))
