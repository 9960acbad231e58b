"""What an amount of dollars reads as: the same words the pages' script gives the figures that change
live (``tests/js/money.test.mjs`` holds the script to the same cases)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from graphs.domain.money_words import usd_text

CASES = json.loads((Path(__file__).parent / "fixtures" / "money" / "amounts.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[case["text"] + " " + str(case["usd"]) for case in CASES])
def test_an_amount_reads_the_same_on_the_server_as_in_the_browser(case):
    stored = None if case["usd"] is None else Decimal(str(case["usd"]))

    assert usd_text(stored) == case["text"]
    assert usd_text(stored, lower_bound=True) == case["lower_bound"]


def test_a_positive_amount_too_small_for_four_decimals_never_reads_as_zero():
    assert usd_text(Decimal("0.00004")) == "< $0.0001"
    assert usd_text(0.00004) == "< $0.0001"
