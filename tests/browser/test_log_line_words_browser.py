"""In a real browser against daphne: every line of the node page's raw log reads as its facts — an
on_fail's target and reruns, a judgment's verdict and issues, a node start's attempt, cause and
sandbox, a command's argv, exit code and duration — whether the page began with it or it came live,
and unfolds to its JSON; all as text."""

from __future__ import annotations

import json

import pytest

from graphs.logs.store import log_append, log_file_close, log_file_open, log_writes_wait
from graphs.models import WorkNodeExecution
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, raw_log_open, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = '<img src=x onerror="window.pwned = true">'
# What the engine writes, and what each line reads as.
LINES = [
    ({"event": "node_start", "node_id": "benchmark", "attempt": 2, "cause": "loop_back", "worker": "host:1:ab",
      "sandbox": "bwrap"}, "attempt 2 · cause loop_back · sandbox bwrap"),
    ({"event": "command_start", "purpose": "judgment", "argv": ["pytest", "-q"], "cwd": "/w", "timeout_seconds": 60},
     "judgment · pytest -q"),
    ({"event": "command_exit", "purpose": "judgment", "exit_code": 1, "duration_ms": 365, "timed_out": False,
      "output_dropped_bytes": 0}, "exit code 1 · 365 ms"),
    ({"event": "judgment", "ok": False, "kind": "command", "issues": ["2 tests failed", HOSTILE]},
     f"fail · judged by command · 2 tests failed; {HOSTILE}"),
    ({"event": "on_fail", "action": "loop_back", "outcome": "looped_back", "target": "prd",
      "rerun": ["prd", "sdd", "benchmark"]}, "loop_back → prd, rerun prd, sdd, benchmark"),
]


def line_text(page, event: str) -> str:
    return page.locator(f"#log-lines li[data-event='{event}'] .text").inner_text()


def attempt_of(task) -> WorkNodeExecution:
    run = planned_run(task, {"nodes": [node("benchmark")], "edges": []}, status="running")
    return factories.ExecutionFactory(run=run, node_id="benchmark", status="running")


def test_the_lines_a_page_begins_with_read_as_their_facts_and_unfold_to_json(chromium, console_server, alice, task):
    attempt = attempt_of(task)
    log_file_open(execution=attempt)
    for fields, _ in LINES:
        log_append(execution=attempt, **fields)
    log_file_close(execution=attempt)
    assert log_writes_wait()
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{attempt.pk}/", "alice")
    raw_log_open(page)
    for fields, words in LINES:
        assert line_text(page, fields["event"]) == words

    on_fail = page.locator("#log-lines li[data-event='on_fail']")
    on_fail.locator("button.line-json").click()
    assert on_fail.locator("button.line-json").get_attribute("aria-expanded") == "true"
    unfolded = json.loads(on_fail.locator("pre.line-json-body").inner_text())
    assert unfolded["rerun"] == ["prd", "sdd", "benchmark"] and unfolded["event"] == "on_fail"
    on_fail.locator("button.line-json").click()
    assert on_fail.locator("pre.line-json-body").count() == 0
    assert page.locator("#log-lines img").count() == 0 and page.evaluate("window.pwned === undefined")
    page.screenshot(path=str(ARTIFACTS / "log-line-words.png"), full_page=True)


def test_live_lines_read_as_their_facts_and_unfold_to_json(chromium, console_server, alice, task):
    attempt = attempt_of(task)
    log_file_open(execution=attempt)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{attempt.pk}/", "alice")
    raw_log_open(page)
    for fields, _ in LINES:
        log_append(execution=attempt, **fields)
    assert log_writes_wait()
    page.wait_for_function(f"() => document.querySelectorAll('#log-lines li').length === {len(LINES)}")
    for fields, words in LINES:
        assert line_text(page, fields["event"]) == words

    judgment = page.locator("#log-lines li[data-event='judgment']")
    judgment.locator("button.line-json").click()
    assert json.loads(judgment.locator("pre.line-json-body").inner_text())["issues"] == ["2 tests failed", HOSTILE]
    assert page.locator("#log-lines img").count() == 0 and page.evaluate("window.pwned === undefined")
    log_file_close(execution=attempt)
