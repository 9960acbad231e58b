"""A log line's summary on the node page: the same words the page's script gives the lines that arrive
live (``tests/js/log-line.test.mjs`` holds the script to the same cases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.logs.lines import log_line_summary
from graphs.logs.store import log_append, log_file_open
from tests import factories

CASES = json.loads((Path(__file__).parent / "fixtures" / "log_lines" / "summaries.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[case["line"]["event"] + str(case["line"]["seq"]) for case in CASES])
def test_a_line_is_summarized_in_its_own_words(case):
    assert log_line_summary(case["line"]) == case["summary"]


@pytest.mark.django_db
def test_the_node_page_shows_a_tool_calls_name_and_input_escaped(task, alice, client):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    log_append(execution=execution, event="tool_call", name="Bash", input='{"command": "<script>x</script>"}')
    client.force_login(alice)

    page = client.get(f"/executions/{execution.pk}/").content.decode()

    assert "Bash · {&quot;command&quot;: &quot;&lt;script&gt;x&lt;/script&gt;&quot;}" in page
    assert "<script>x</script>" not in page
