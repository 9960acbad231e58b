"""In a real browser against daphne: the node page's raw log as a viewer — kinds to show, built from the
lines there are and growing as live lines bring new kinds; a search that keeps and marks the matching
lines and counts them; Follow, which keeps the newest live line in view until it is unticked or the
reader scrolls up; the JSONL download; and a phone's width without sideways scrolling."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from graphs.engine.record import attempt_finish
from graphs.logs.store import log_append, log_file_close, log_file_open, log_writes_wait
from graphs.models import ExecutionLogFile, ExecutionLogLine, WorkNodeExecution
from tests import factories
from tests.browser.conftest import ARTIFACTS, OVERFLOW, PAGE_WAIT_MS, raw_log_open, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = '<img src=x onerror="window.pwned = true">'
LINES = 1500
WORKER = "host:1:follow"


def closed_log(attempt: WorkNodeExecution, *, lines: int) -> None:
    """A closed log: tool calls (``ls dir<seq>``) and their results, with one hostile result among them."""
    log_file = log_file_open(execution=attempt)
    start = datetime(2025, 6, 1, 10, tzinfo=UTC)
    rows = []
    for seq in range(1, lines + 1):
        ts = start + timedelta(milliseconds=seq)
        if seq % 2:
            event, fields = "tool_call", {"name": "Bash", "input": f"ls dir{seq}"}
        else:
            event, fields = "tool_result", {"is_error": False, "content": HOSTILE if seq == 2 else f"file{seq}.py"}
        line = {"seq": seq, "ts": ts.isoformat(timespec="milliseconds"), "event": event, **fields}
        rows.append(ExecutionLogLine(log_file=log_file, seq=seq, ts=ts, event=event, text=json.dumps(line)))
    ExecutionLogLine.objects.bulk_create(rows)
    ExecutionLogFile.objects.filter(pk=log_file.pk).update(status="closed", last_seq=lines, line_count=lines)


def shown_events(page) -> set[str]:
    return set(page.eval_on_selector_all("#log-lines li:not([hidden]) .event", "els => els.map(e => e.textContent)"))


def test_a_long_log_filters_by_kind_and_search_and_keeps_agent_text_as_text(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="succeeded")
    attempt = factories.ExecutionFactory(run=run, node_id="a", status="succeeded")
    closed_log(attempt, lines=LINES)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{attempt.pk}/", "alice")
    raw_log_open(page)
    assert page.locator("#log-count").inner_text() == "1,500 lines"
    kinds = [text.strip() for text in page.locator("#log-kinds label[data-kind]").all_inner_texts()]
    assert kinds == ["tool_call 750", "tool_result 750"]
    assert not page.locator("#log-follow").is_checked(), "a finished log is read from its start"

    page.uncheck("#log-kinds input[value='tool_result']")
    assert shown_events(page) == {"tool_call"}
    assert page.locator("#log-count").inner_text() == "750 of 1,500 lines shown"

    page.fill("#log-search", "DIR42")
    # The tool calls (odd seqs) of dir421, dir423 … dir429: five.
    page.wait_for_function("() => document.getElementById('log-count').textContent === '5 matching lines'")
    assert page.eval_on_selector_all("#log-lines li:not([hidden]) mark", "els => els.map(e => e.textContent)") == [
        "dir42"] * 5
    page.check("#log-kinds input[value='tool_result']")
    assert page.locator("#log-count").inner_text() == "5 matching lines"
    page.fill("#log-search", "onerror")
    page.wait_for_function("() => document.getElementById('log-count').textContent === '1 matching line'")
    hostile = page.locator("#log-lines li:not([hidden]) .text")
    assert hostile.inner_text() == HOSTILE
    assert page.locator("#log-lines img").count() == 0
    assert page.evaluate("window.pwned === undefined")
    page.screenshot(path=str(ARTIFACTS / "log-viewer-search.png"), full_page=True, timeout=60_000)

    page.fill("#log-search", "")
    page.wait_for_function("() => document.getElementById('log-count').textContent === '1,500 lines'")
    assert page.locator("#log-lines mark").count() == 0
    download = page.locator("#raw-log a:has-text('Download JSONL')").get_attribute("href")
    response = page.request.get(f"{console_server}{download}")
    assert response.status == 200 and len(response.text().splitlines()) == LINES


AT_END = ("() => { const list = document.getElementById('log-lines');"
          " return list.scrollHeight - list.scrollTop - list.clientHeight <= 2; }")
LINE_COUNT = "() => document.querySelectorAll('#log-lines li').length"
# Records every line the page changes other than those it adds: a live line must touch no other.
WATCH_CHANGES = """() => {
  const list = document.getElementById('log-lines');
  const added = new Set();
  window.linesTouched = [];
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.target === list) {
        record.addedNodes.forEach((item) => added.add(item));
        if (record.removedNodes.length) window.linesTouched.push('removed');
        continue;
      }
      const item = (record.target.nodeType === 1 ? record.target : record.target.parentElement).closest('li');
      if (!added.has(item)) window.linesTouched.push(item ? item.dataset.seq : 'list');
    }
  }).observe(list, { subtree: true, childList: true, attributes: true, characterData: true });
}"""


def _written_live(attempt: WorkNodeExecution, count: int) -> None:
    """``count`` more lines of the agent's output, stored and sent to the page as a worker's are."""
    for _ in range(count):
        log_append(execution=attempt, event="agent_output", text="test output: still testing")
    assert log_writes_wait()


def test_follow_keeps_the_newest_live_line_in_view_until_paused(chromium, console_server, alice, task):
    # The test writes the attempt's lines itself, each when it needs one: an agent writing at its own pace
    # may have finished before a step that waits for a new line.
    run = planned_run(task, {"nodes": [node("draft")], "edges": []}, status="running")
    attempt = factories.ExecutionFactory(run=run, node_id="draft", status="running", worker=WORKER)
    log_file_open(execution=attempt)
    log_append(execution=attempt, event="node_start", attempt=1, cause="initial", worker=WORKER)
    _written_live(attempt, 6)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{attempt.pk}/", "alice")
    # A short window onto the log, so that a few lines already overflow it.
    raw_log_open(page)
    page.eval_on_selector("#log-lines", "list => { list.style.maxHeight = '4.5em'; }")
    assert page.locator("#log-follow").is_checked(), "a log being written is followed"
    # A search that marks nearly every line: redrawing the lines there are for each live one would show.
    page.fill("#log-search", "t")
    page.wait_for_function("() => document.getElementById('log-count').textContent.endsWith('matching lines')")
    page.evaluate(WATCH_CHANGES)
    present = page.evaluate(LINE_COUNT)
    _written_live(attempt, 3)
    page.wait_for_function(f"() => document.querySelectorAll('#log-lines li').length >= {present + 3}")
    assert page.evaluate(AT_END), "following keeps the newest line in view"
    assert page.evaluate("window.linesTouched") == [], "a live line leaves the lines before it alone"
    page.fill("#log-search", "")
    page.wait_for_function("() => !document.getElementById('log-count').textContent.includes('matching')")

    page.uncheck("#log-follow")
    page.eval_on_selector("#log-lines", "l => { l.scrollTop = 0; }")
    paused_at = page.evaluate(LINE_COUNT)
    _written_live(attempt, 1)
    page.wait_for_function(f"() => document.querySelectorAll('#log-lines li').length >= {paused_at + 1}")
    assert page.eval_on_selector("#log-lines", "l => l.scrollTop") == 0, "a paused log stays where it was read"

    page.check("#log-follow")
    assert page.evaluate(AT_END)
    # Reading back up pauses it too.
    page.eval_on_selector("#log-lines", "l => { l.scrollTop = 0; }")
    page.wait_for_function("() => !document.getElementById('log-follow').checked")
    page.check("#log-follow")

    # The kinds grow with the live lines: the attempt's last line is a kind the page began without.
    attempt_finish(attempt, worker=WORKER, status="succeeded", output={"text": "tested"})
    log_file_close(execution=attempt)
    page.wait_for_selector("#log-kinds label[data-kind='node_finished']")
    page.wait_for_selector("body[data-attempt-finished='true']")
    kinds = page.eval_on_selector_all("#log-kinds label[data-kind]", "els => els.map(e => e.dataset.kind)")
    assert kinds == sorted(kinds)
    page.uncheck("#log-kinds input[value='node_finished']")
    assert "node_finished" not in shown_events(page)
    total = page.evaluate(LINE_COUNT)
    assert page.locator("#log-count").inner_text() == f"{total - 1} of {total:,} lines shown"
    page.screenshot(path=str(ARTIFACTS / "log-viewer-live.png"), full_page=True, timeout=60_000)


def test_the_log_viewer_fits_a_phone(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="succeeded")
    attempt = factories.ExecutionFactory(run=run, node_id="a", status="succeeded")
    closed_log(attempt, lines=40)
    page = chromium.new_page(viewport={"width": 390, "height": 844})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{attempt.pk}/", "alice")
    raw_log_open(page)
    page.fill("#log-search", "dir1")
    page.wait_for_function("() => document.getElementById('log-count').textContent.endsWith('matching lines')")
    overflow = page.evaluate(OVERFLOW)
    page.screenshot(path=str(ARTIFACTS / "log-viewer-390.png"), full_page=True, timeout=60_000)
    assert overflow["scroll"] <= 0, overflow
