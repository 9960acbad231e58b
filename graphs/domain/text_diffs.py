"""Line diffs of two texts, side by side, for the compare pages, and where a line of a text is in its next
version (a review comment carried onto the change that amends the one it was written on).

Pure functions over strings (no Django): the rows a template draws as two columns, old on the left and
new on the right, with long unchanged stretches folded into one row that says how many lines it hides.
The texts are agent-written: the rows carry them as plain strings, for the template to escape.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# Unchanged lines kept on each side of a change; a longer unchanged stretch folds into one row.
CONTEXT_LINES = 3
# A side longer than this is compared on its first lines only (the matcher is quadratic at worst).
MAX_LINES = 4000

# Pages write a decrease with the typographic minus sign, as the changed-files tables do.
MINUS = "\N{MINUS SIGN}"

RowKind = Literal["same", "changed", "removed", "added", "folded"]


@dataclass(frozen=True)
class DiffRow:
    """One row of a side-by-side diff. A ``folded`` row stands for ``folded`` unchanged lines."""

    kind: RowKind
    old: str | None = None
    new: str | None = None
    old_number: int | None = None
    new_number: int | None = None
    folded: int = 0


@dataclass(frozen=True)
class TextDiff:
    rows: list[DiffRow]
    added: int
    removed: int
    # True when a side was longer than ``line_limit`` lines and only its first ones were compared.
    cut: bool
    line_limit: int = MAX_LINES

    @property
    def identical(self) -> bool:
        return not self.added and not self.removed

    def summary(self) -> str:
        """``identical``, or the lines added and removed: ``+3 -1 lines`` (the minus being ``MINUS``)."""
        if self.identical:
            return "identical"
        return f"+{self.added} {MINUS}{self.removed} lines"


def text_diff(*, old: str, new: str) -> TextDiff:
    """The side-by-side line diff of ``old`` against ``new``; a line changed in place pairs with its new
    version in one ``changed`` row, so the two columns stay aligned."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    cut = len(old_lines) > MAX_LINES or len(new_lines) > MAX_LINES
    old_lines, new_lines = old_lines[:MAX_LINES], new_lines[:MAX_LINES]
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    rows: list[DiffRow] = []
    added = removed = 0
    opcodes = matcher.get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            rows.extend(_unchanged(old_lines, i1, i2, j1, first=index == 0, last=index == len(opcodes) - 1))
            continue
        removed += i2 - i1
        added += j2 - j1
        for offset in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + offset, j1 + offset
            has_old, has_new = i < i2, j < j2
            kind: RowKind = "changed" if has_old and has_new else "removed" if has_old else "added"
            rows.append(DiffRow(
                kind=kind,
                old=old_lines[i] if has_old else None, new=new_lines[j] if has_new else None,
                old_number=i + 1 if has_old else None, new_number=j + 1 if has_new else None,
            ))
    return TextDiff(rows=rows, added=added, removed=removed, cut=cut, line_limit=MAX_LINES)


def _unchanged(lines: list[str], i1: int, i2: int, j1: int, *, first: bool, last: bool) -> list[DiffRow]:
    """The rows of an unchanged stretch: its lines next to a change, the rest folded into one row."""
    def row(i: int) -> DiffRow:
        return DiffRow(kind="same", old=lines[i], new=lines[i], old_number=i + 1, new_number=j1 + (i - i1) + 1)

    head = 0 if first else CONTEXT_LINES
    tail = 0 if last else CONTEXT_LINES
    if i2 - i1 <= head + tail + 1:
        return [row(i) for i in range(i1, i2)]
    folded = DiffRow(kind="folded", folded=i2 - i1 - head - tail)
    return [*(row(i) for i in range(i1, i1 + head)), folded, *(row(i) for i in range(i2 - tail, i2))]


def line_carried(*, old: Sequence[str], new: Sequence[str], line: int) -> int | None:
    """The number in ``new`` of line ``line`` (1 is the first) of ``old``, when the line is still there as
    it was; None when the change between them changed or removed it, or when it lies past the first
    ``MAX_LINES`` lines that are compared."""
    if not 1 <= line <= min(len(old), MAX_LINES):
        return None
    matcher = difflib.SequenceMatcher(None, list(old[:MAX_LINES]), list(new[:MAX_LINES]), autojunk=False)
    for i, j, size in matcher.get_matching_blocks():
        if i < line <= i + size:
            return j + (line - i)
    return None
