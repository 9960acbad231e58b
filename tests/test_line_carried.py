"""Where a commented line is in the next version of its file: moved by lines added or removed before it, or
gone when the change rewrote or removed it, so the node page draws a carried comment on the right line."""

from __future__ import annotations

from graphs.domain import text_diffs
from graphs.domain.text_diffs import line_carried

OLD = ["def export():", "    rows = load()", "    return ','.join(rows)", "", "EXPORTED = True"]


def test_a_line_kept_as_it_was_keeps_its_number_or_moves_with_the_lines_added_before_it():
    assert line_carried(old=OLD, new=OLD, line=3) == 3
    assert line_carried(old=OLD, new=["import csv", "", *OLD], line=3) == 5
    assert line_carried(old=OLD, new=OLD[1:], line=5) == 4


def test_a_line_the_change_rewrote_or_removed_is_carried_nowhere():
    rewritten = [OLD[0], "    rows = load_all()", *OLD[2:]]
    assert line_carried(old=OLD, new=rewritten, line=2) is None
    assert line_carried(old=OLD, new=rewritten, line=3) == 3
    assert line_carried(old=OLD, new=OLD[:4], line=5) is None


def test_a_line_outside_the_old_text_or_past_the_lines_compared_is_carried_nowhere(monkeypatch):
    assert line_carried(old=OLD, new=OLD, line=0) is None
    assert line_carried(old=OLD, new=OLD, line=6) is None
    monkeypatch.setattr(text_diffs, "MAX_LINES", 3)
    assert line_carried(old=OLD, new=OLD, line=3) == 3
    assert line_carried(old=OLD, new=OLD, line=4) is None
