"""Agent text with NUL characters is stored (PostgreSQL refuses them) with a visible replacement."""

from __future__ import annotations

import pytest

from graphs.domain.storable import storable
from graphs.engine import run_start
from tests.run_builders import latest, node, planned_run


def test_nul_characters_are_replaced_everywhere_in_a_payload():
    assert storable({"a\x00": ["x\x00y", {"k": "\x00"}], "n": 3}) == {"a\ufffd": ["x\ufffdy", {"k": "\ufffd"}], "n": 3}


@pytest.mark.django_db
def test_a_node_whose_agent_answers_with_binary_output_still_records_it(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "a")] = "bytes:\x00\x01\x02 end"
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["a"]
    assert row.status == "succeeded"
    assert row.output_payload["text"] == "bytes:\ufffd\x01\x02 end"
