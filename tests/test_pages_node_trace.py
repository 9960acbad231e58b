"""The node page's trace: its header read from the attempt row (model, turns, tokens, cost and the command
that reopens the session), the lines the page's script builds the trace from, and a query count that
does not grow with the log. ``tests/js/trace.test.mjs`` holds the script's header to the same cases."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from console.views import executions
from graphs.engine import run_start
from graphs.logs.store import log_append, log_file_open, log_read
from graphs.models import ExecutionLogFile, ExecutionLogLine
from graphs.reads.node_trace import TraceHeader
from tests import factories
from tests.run_builders import latest, node, planned_run

pytestmark = pytest.mark.django_db

SESSION = "5b0f6c7e-2d7a-4a51-9a63-0c1f4f2f8e11"
HEADER_CASES = json.loads((Path(__file__).parent / "fixtures" / "trace" / "headers.json").read_text())
HOSTILE = '</script><script>alert(1)</script><img src=x onerror="alert(2)">'


@pytest.fixture
def client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def trace_lines_of(html: str) -> list[dict]:
    """The lines the page hands its script (the ``json_script`` block)."""
    [payload] = re.findall(r'<script id="trace-lines" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(payload)


def finished_log(execution, *, lines: int) -> None:
    """A closed log of ``lines`` tool calls and results, stored the way the log writer stores them."""
    log_file = log_file_open(execution=execution)
    start = datetime(2025, 6, 1, 10, tzinfo=UTC)
    rows = []
    for seq in range(1, lines + 1):
        ts = start + timedelta(milliseconds=seq)
        call = seq % 2
        fields = ({"tool_use_id": f"toolu_{seq}", "name": "Bash", "input": '{"command": "ls"}'} if call
                  else {"tool_use_id": f"toolu_{seq - 1}", "is_error": False, "content": "a.py"})
        event = "tool_call" if call else "tool_result"
        line = {"seq": seq, "ts": ts.isoformat(timespec="milliseconds"), "event": event, "purpose": "node", **fields}
        rows.append(ExecutionLogLine(log_file=log_file, seq=seq, ts=ts, event=event, text=json.dumps(line)))
    ExecutionLogLine.objects.bulk_create(rows)
    ExecutionLogFile.objects.filter(pk=log_file.pk).update(status="closed", last_seq=lines, line_count=lines)


@pytest.mark.parametrize("case", HEADER_CASES, ids=[case["name"] for case in HEADER_CASES])
def test_the_header_reads_the_same_as_the_pages_script_reads_it(case):
    totals = case["totals"]
    header = TraceHeader(
        model="claude-sonnet-4-5", num_turns=totals["num_turns"], usage=totals["usage"],
        cost_usd=None if totals["cost_usd"] is None else Decimal(str(totals["cost_usd"])),
        session_id=totals["session_id"],
    )

    words = {"turns": header.turns, "tokens": header.tokens, "tokens_detail": header.tokens_detail,
             "cost": header.cost, "resume": header.resume_command}
    assert words == case["header"]


def test_a_finished_claude_attempt_shows_its_model_turns_tokens_cost_and_resume_command(
    client, task, claude_cli, inline_executor
):
    claude_cli("streaming.json")
    run = planned_run(task, {"nodes": [node("survey")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    execution = latest(run)["survey"]

    html = client.get(f"/executions/{execution.pk}/").content.decode()

    assert 'data-source="row"' in html
    assert '<dd data-field="model">claude-sonnet-4-5-20250929</dd>' in html
    assert '<dd data-field="turns">4</dd>' in html
    assert '<span data-field="tokens">27,831</span>' in html
    assert "12 input · 1,874 output · 5,812 cache write · 20,133 cache read" in html
    assert '<dd data-field="cost">$0.2113</dd>' in html
    assert f'<code id="resume-command">claude --resume {SESSION}</code>' in html
    assert "data-resume hidden" not in html
    # The trace is built from the log as stored, every line of it.
    lines = trace_lines_of(html)
    assert lines == log_read(log_file=ExecutionLogFile.objects.get(node_exec=execution))
    assert [line["name"] for line in lines if line["event"] == "tool_call"] == ["Read", "Task", "Grep"]


def test_a_running_attempt_leaves_its_header_to_the_live_lines(client, task):
    # A run with a budget writes each call's spend as it ends: the row holds only the calls so far.
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running", agent_calls=1,
                                           cost_usd=Decimal("0.5"), num_turns=3, session_id="node-session")
    log_file_open(execution=execution)
    log_append(execution=execution, event="agent_call", purpose="node", org_node="planner")

    html = client.get(f"/executions/{execution.pk}/").content.decode()

    assert 'data-source="lines"' in html
    assert '<dd data-field="cost">—</dd>' in html and "$0.5000" not in html
    assert "data-resume hidden" in html and "node-session" not in html
    assert 'data-follow="true"' in html
    assert [line["event"] for line in trace_lines_of(html)] == ["agent_call"]


def test_hostile_agent_text_reaches_the_script_intact_and_never_as_markup(client, task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    log_append(execution=execution, event="tool_call", purpose="node", tool_use_id="toolu_x", name=HOSTILE,
               input=json.dumps({"command": HOSTILE}))
    log_append(execution=execution, event="tool_result", purpose="node", tool_use_id="toolu_x", is_error=True,
               content=HOSTILE)

    html = client.get(f"/executions/{execution.pk}/").content.decode()

    assert "<script>alert" not in html and "<img src=x" not in html
    call, result = trace_lines_of(html)
    assert (call["name"], json.loads(call["input"])["command"], result["content"]) == (HOSTILE, HOSTILE, HOSTILE)


def test_a_finished_log_is_followed_only_when_the_page_could_not_hold_all_of_it(client, task, monkeypatch):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="succeeded")
    finished_log(execution, lines=10)

    assert 'data-follow="false"' in client.get(f"/executions/{execution.pk}/").content.decode()

    monkeypatch.setattr(executions, "LOG_LINES_ON_PAGE", 6)
    html = client.get(f"/executions/{execution.pk}/").content.decode()
    assert 'data-follow="true"' in html and 'data-last-seq="6"' in html
    assert len(trace_lines_of(html)) == 6


def test_the_page_takes_as_many_queries_for_a_thousand_lines_as_for_ten(client, task):
    queries = {}
    for count in (10, 1000):
        execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="succeeded")
        finished_log(execution, lines=count)
        with CaptureQueriesContext(connection) as captured:
            html = client.get(f"/executions/{execution.pk}/").content.decode()
        assert len(trace_lines_of(html)) == count
        queries[count] = len(captured)

    assert queries[1000] == queries[10], queries
