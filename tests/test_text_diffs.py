"""Side-by-side line diffs for the compare pages: changed lines pair up, long unchanged stretches fold,
identical texts say so, and an overlong side is compared on its first lines only."""

from __future__ import annotations

from graphs.domain import text_diffs
from graphs.domain.text_diffs import CONTEXT_LINES, text_diff


def test_a_line_changed_in_place_pairs_with_its_new_version_in_one_row():
    diff = text_diff(old="keep\nold words\nkeep too", new="keep\nnew words\nkeep too")
    assert [(row.kind, row.old, row.new) for row in diff.rows] == [
        ("same", "keep", "keep"), ("changed", "old words", "new words"), ("same", "keep too", "keep too"),
    ]
    assert (diff.added, diff.removed, diff.summary()) == (1, 1, "+1 \N{MINUS SIGN}1 lines")


def test_lines_only_one_side_has_stand_alone_with_their_own_numbers():
    diff = text_diff(old="a\nb", new="a\nb\nc\nd")
    assert [(row.kind, row.old_number, row.new_number, row.new) for row in diff.rows[2:]] == [
        ("added", None, 3, "c"), ("added", None, 4, "d"),
    ]
    removed = text_diff(old="a\nb\nc", new="a")
    assert [(row.kind, row.old) for row in removed.rows[1:]] == [("removed", "b"), ("removed", "c")]


def test_a_long_unchanged_stretch_folds_to_the_lines_next_to_the_changes():
    middle = [f"line {n}" for n in range(50)]
    diff = text_diff(old="\n".join(["start", *middle, "end"]), new="\n".join(["START", *middle, "END"]))
    kinds = [row.kind for row in diff.rows]
    assert kinds == ["changed", *["same"] * CONTEXT_LINES, "folded", *["same"] * CONTEXT_LINES, "changed"]
    folded = diff.rows[1 + CONTEXT_LINES]
    assert folded.folded == 50 - 2 * CONTEXT_LINES
    assert diff.rows[-2].old_number == 51 and diff.rows[-2].new_number == 51


def test_identical_texts_fold_whole_and_say_they_are_identical():
    diff = text_diff(old="same\ntext\nhere", new="same\ntext\nhere")
    assert diff.identical and diff.summary() == "identical"
    assert [(row.kind, row.folded) for row in diff.rows] == [("folded", 3)]
    assert text_diff(old="", new="").rows == []


def test_an_overlong_side_is_compared_on_its_first_lines(monkeypatch):
    monkeypatch.setattr(text_diffs, "MAX_LINES", 10)
    diff = text_diff(old="\n".join(map(str, range(30))), new="\n".join(map(str, range(5))))
    assert diff.cut
    assert diff.removed == 5
