"""In a real browser against daphne: the node page's trace follows a Claude call as it runs (a tool call
appears, then its result and duration, then the header's cost, turns and resume command), and agent
text in it, however hostile, shows as text and runs nothing.

The node runs in this process, with the claude runner pointed at the fake CLI and held at its gates;
the served console reads its lines from the shared database, as a console process does for a run
another process executes. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import json
import re
import threading

import pytest

from graphs.engine import run_start
from graphs.logs import writer
from graphs.logs.store import log_append, log_file_open
from graphs.models import WorkNodeExecution
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.run_builders import drained_in_background, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

SESSION = "5b0f6c7e-2d7a-4a51-9a63-0c1f4f2f8e11"
HOSTILE = """<img src=x onerror="window.__ran.push('img')"><script>window.__ran.push('script')</script>"""
RECORD = """
window.__ran = [];
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => window.__violations.push(event.violatedDirective));
"""


@pytest.fixture
def stored_events(monkeypatch):
    """The events of the log lines this process stores, each an Event set once such a line is stored."""
    seen: dict[str, threading.Event] = {}

    def listener(execution, line) -> None:
        seen.setdefault(line["event"], threading.Event()).set()

    monkeypatch.setattr(writer, "_listeners", [*writer._listeners, listener])
    return lambda event: seen.setdefault(event, threading.Event())


def test_the_trace_follows_a_running_claude_call_live(
    chromium, console_server, alice, task, claude_cli, inline_executor, stored_events, monkeypatch, tmp_path,
    settings, sandbox_writable,
):
    # The call is held longer than a heartbeat; a beat would leave this process's heartbeat thread holding
    # a database connection, which PostgreSQL's test-database teardown then trips over.
    settings.WORKGRAPH_HEARTBEAT_SECONDS = 600
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_CLAUDE_GATE", str(gate))
    claude_cli("gated_trace.json")
    run = planned_run(task, {"nodes": [node("tests")], "edges": []})
    run_start(run=run)
    execution = run.executions.get(node_id="tests")

    # Opening the gate as the block ends lets the held call finish; the jobs are joined then.
    with drained_in_background(inline_executor, gate=gate):
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console_server)
        page = context.new_page()
        page.set_default_timeout(PAGE_WAIT_MS)
        try:
            assert stored_events("agent_init").wait(20), "the CLI never started"
            sign_in(page, f"{console_server}/executions/{execution.pk}/", "alice")
            # Held before its tool call: the call is under way, its session known, no tool call yet.
            page.wait_for_selector("#trace-header [data-field='model']:text-is('claude-sonnet-4-5-20250929')")
            page.wait_for_selector("#log-state:text-is('open')")
            assert page.locator(".trace-call").count() == 0

            gate.with_name("gate.call").touch()
            call = page.locator(".trace-call[data-tool-use-id='toolu_06Pytest']")
            call.wait_for()
            assert WorkNodeExecution.objects.get(pk=execution.pk).status == "running"
            assert call.get_attribute("data-state") == "running"
            assert (call.locator(".trace-tool").inner_text(), call.locator(".trace-summary").inner_text()) == (
                "Bash", "pytest -q")
            assert call.locator(".trace-time").inner_text() == "running…"
            assert page.locator(".trace-text").first.inner_text() == "I'll run the tests."
            assert page.locator(".trace-group h3").all_inner_texts() == ["Node call"]
            assert page.inner_text("[data-field='cost']") == "—"
            page.screenshot(path=str(ARTIFACTS / "node-trace-running.png"), full_page=True)

            gate.touch()
            page.wait_for_selector(".trace-call[data-tool-use-id='toolu_06Pytest'][data-state='ok']")
            assert re.fullmatch(r"\d+ ms|\d+\.\d s", call.locator(".trace-time").inner_text())
            result = call.locator("details.trace-result")
            assert not result.locator("pre").is_visible()  # collapsed until opened
            result.locator("summary").click()
            assert result.locator("pre").inner_text() == "3 passed in 0.41s\n"
            page.wait_for_selector("[data-field='cost']:text-is('$0.2113')")
            assert page.inner_text("[data-field='turns']") == "2"
            assert page.inner_text("[data-field='tokens']") == "27,831"
            assert page.inner_text("#resume-command") == f"claude --resume {SESSION}"
            assert page.locator("[data-resume]").is_visible()
            page.wait_for_selector("#log-state:text-is('log complete')")
            page.click("#resume-copy")
            page.wait_for_selector("#resume-copy:text-is('Copied')")
            assert page.evaluate("navigator.clipboard.readText()") == f"claude --resume {SESSION}"
            page.screenshot(path=str(ARTIFACTS / "node-trace-finished.png"), full_page=True)
            page.set_viewport_size({"width": 390, "height": 844})
            page.screenshot(path=str(ARTIFACTS / "node-trace-narrow.png"), full_page=True)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        finally:
            gate.with_name("gate.call").touch()
            context.close()


def test_hostile_agent_text_in_the_trace_shows_literally_and_runs_nothing(chromium, console_server, alice, task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    log_append(execution=execution, event="agent_call", purpose="node", org_node="planner")
    log_append(execution=execution, event="tool_call", purpose="node", tool_use_id="toolu_1", name="Bash",
               input=json.dumps({"command": HOSTILE}), parent_tool_use_id=None)
    log_append(execution=execution, event="tool_result", purpose="node", tool_use_id="toolu_1", is_error=True,
               content=HOSTILE, parent_tool_use_id=None)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    page.add_init_script(RECORD)

    sign_in(page, f"{console_server}/executions/{execution.pk}/", "alice")
    page.wait_for_selector(".trace-call[data-state='error']")
    # Live lines go through the same rule: a hostile tool name, input and text arriving over the socket.
    log_append(execution=execution, event="agent_text", purpose="node", text=HOSTILE, parent_tool_use_id=None)
    log_append(execution=execution, event="tool_call", purpose="node", tool_use_id="toolu_2", name=HOSTILE,
               input=json.dumps({"query": HOSTILE}), parent_tool_use_id=None)
    page.wait_for_selector(".trace-call[data-tool-use-id='toolu_2']")

    first, second = page.locator(".trace-call").all()
    assert first.locator(".trace-summary").inner_text() == HOSTILE
    first.locator("details.trace-result summary").click()
    assert first.locator("details.trace-result pre").inner_text() == HOSTILE
    assert page.locator(".trace-text").inner_text() == HOSTILE
    assert second.locator(".trace-tool").inner_text() == HOSTILE
    assert json.loads(second.locator(".trace-summary").inner_text()) == {"query": HOSTILE}
    assert page.locator("#trace img, #trace script").count() == 0
    assert page.evaluate("window.__ran") == []
    assert page.evaluate("window.__violations") == []
    page.screenshot(path=str(ARTIFACTS / "node-trace-hostile.png"), full_page=True)
