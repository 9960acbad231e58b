"""What agent calls cost, in words: the sentence every page shows, live regions included, is the server's."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from graphs.agents.base import TOKEN_FIELDS
from graphs.runs.accounting import Spend

CASES = json.loads((Path(__file__).parent / "fixtures" / "spend" / "summaries.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[case["summary"] for case in CASES])
def test_a_spend_reads_as_its_case_says(case):
    figures = case["spend"]
    cost = figures["cost_usd"]
    spend = Spend(
        agent_calls=figures["agent_calls"], cost_usd=None if cost is None else Decimal(str(cost)),
        usage={**dict.fromkeys(TOKEN_FIELDS, 0), "input_tokens": figures["tokens"] or 0}, num_turns=0, tool_calls=0,
        calls_without_usage=figures.get("calls_without_usage", 0),
        calls_without_cost=figures.get("calls_without_cost", 0),
    )

    assert (spend.summary(), spend.cost_text()) == (case["summary"], case["cost"])
