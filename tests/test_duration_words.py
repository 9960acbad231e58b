"""How long something took or has waited reads in one set of words on every page: seconds under a minute
(never "0 minutes"), then the two largest units."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphs.domain.duration_words import duration_text


@pytest.mark.parametrize(("seconds", "words"), [
    (0, "0.0 s"),
    (0.4, "0.4 s"),
    (4.2, "4.2 s"),
    (42.7, "42 s"),
    (59.9, "59 s"),
    (60, "1 min 00 s"),
    (185, "3 min 05 s"),
    (2 * 3600 + 7 * 60 + 59, "2 h 07 min"),
    (3 * 86400 + 4 * 3600 + 5, "3 d 04 h"),
])
def test_a_duration_reads_in_its_two_largest_units(seconds, words):
    assert duration_text(timedelta(seconds=seconds)) == words


def test_a_negative_duration_from_clocks_that_disagree_reads_as_none():
    assert duration_text(timedelta(seconds=-3)) == "0.0 s"
