"""In a real browser: an attempt whose agent's tool calls failed says how many and quotes the first error,
as text, on its node page and in the run graph's side panel — though the attempt succeeded."""

from __future__ import annotations

import pytest
from django.utils import timezone

from graphs.models import WorkNodeExecution
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

FIRST = "Error: No such tool available: Write. <img src=x onerror=alert(1)>"
PANEL_STATE = "() => document.getElementById('panel-body').dataset.state === 'succeeded'"


def test_the_node_page_and_the_panel_say_which_tool_calls_failed(chromium, console_server, alice, task):
    run = planned_run(task, {"nodes": [node("summary")], "edges": []}, status="succeeded")
    now = timezone.now()
    attempt = WorkNodeExecution.objects.create(
        run=run, node_id="summary", subagent_type="planner", status="succeeded", started_at=now, finished_at=now,
        output_payload={"text": "The summary."}, agent_calls=1, tool_calls=3, tool_failures=2,
        tool_failure_first=FIRST)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)

    sign_in(page, f"{console_server}/executions/{attempt.pk}/", "alice")
    on_page = page.locator("#tool-failures")
    assert on_page.inner_text() == f"2 tool calls failed: {FIRST}"
    assert on_page.locator("img").count() == 0

    page.goto(f"{console_server}/runs/{run.run_id}/?node=summary")
    page.wait_for_function(PANEL_STATE)
    in_panel = page.locator("#panel-body [data-tool-failures='2']")
    assert in_panel.inner_text() == f"2 tool calls failed: {FIRST}"
    assert in_panel.locator("img").count() == 0
    page.close()
