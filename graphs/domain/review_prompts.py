"""What an agent asked to amend its change is told: a change review's body and every comment on a line of
the change, with the lines of code around it, as one section of its node prompt (graphs.domain.prompts).

A review is carried to the next attempt as plain data (``ReviewBrief``, stored on that attempt's input so
the prompt can be built again from it), and a comment's surroundings are cut from the file as the reviewed
attempt left it (``line_excerpt``) when the review is written. Pure functions: no database, no git.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# How many lines before and after a commented line its excerpt holds.
EXCERPT_AROUND = 3
# An excerpt's line is cut to this many characters: a minified file's one line must not flood a prompt.
EXCERPT_LINE_MAX_CHARS = 400


@dataclass(frozen=True)
class ReviewNote:
    """One comment on a line of a file, with the lines around it as ``(number, text)`` pairs."""

    path: str
    line: int
    body: str
    excerpt: tuple[tuple[int, str], ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReviewNote:
        return cls(path=str(data.get("path", "")), line=int(data.get("line") or 0), body=str(data.get("body", "")),
                   excerpt=tuple((int(number), str(text)) for number, text in data.get("excerpt") or ()))

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "body": self.body,
                "excerpt": [[number, text] for number, text in self.excerpt]}


@dataclass(frozen=True)
class ReviewBrief:
    """A request for changes as the next attempt carries it: who asked, what they wrote, their comments on
    lines (``comments``) and the comments of earlier reviews still open (``still_open``)."""

    reviewer: str
    body: str
    comments: tuple[ReviewNote, ...] = ()
    still_open: tuple[ReviewNote, ...] = field(default=())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReviewBrief:
        return cls(reviewer=str(data.get("reviewer", "")), body=str(data.get("body", "")),
                   comments=tuple(ReviewNote.from_dict(note) for note in data.get("comments") or ()),
                   still_open=tuple(ReviewNote.from_dict(note) for note in data.get("still_open") or ()))

    def as_dict(self) -> dict[str, Any]:
        return {"reviewer": self.reviewer, "body": self.body,
                "comments": [note.as_dict() for note in self.comments],
                "still_open": [note.as_dict() for note in self.still_open]}


def line_excerpt(lines: Sequence[str], line: int, *, around: int = EXCERPT_AROUND) -> tuple[tuple[int, str], ...]:
    """The lines numbered ``line - around`` to ``line + around`` of a file whose lines are ``lines`` (the
    first is line 1), as ``(number, text)`` pairs; empty when ``line`` is not in the file."""
    if not 1 <= line <= len(lines):
        return ()
    first, last = max(1, line - around), min(len(lines), line + around)
    return tuple((number, lines[number - 1][:EXCERPT_LINE_MAX_CHARS]) for number in range(first, last + 1))


def review_block(brief: ReviewBrief) -> str:
    """The node prompt's section asking the agent to amend its change as the review says."""
    who = brief.reviewer or "A reviewer"
    parts = [
        "## Changes requested in review\n\n"
        f"{who} reviewed the change an earlier attempt of this node made, and asked for changes. Your working"
        " folder already holds that change: amend it where the review asks, keep the rest, and do not start"
        " over. Line numbers below are those of the files as the earlier attempt left them."
    ]
    if brief.body.strip():
        parts.append(f"What {who} wrote:\n\n{_quoted(brief.body)}")
    if brief.comments:
        parts.append("### Comments on lines of the change\n\n" + _notes(brief.comments))
    if brief.still_open:
        parts.append("### Comments of earlier reviews still open\n\n" + _notes(brief.still_open))
    return "\n\n".join(parts)


def _notes(notes: Iterable[ReviewNote]) -> str:
    return "\n\n".join(_note(note) for note in notes)


def _note(note: ReviewNote) -> str:
    text = f"#### `{note.path}`, line {note.line}"
    if note.excerpt:
        width = len(str(note.excerpt[-1][0]))
        code = "\n".join(f"{'>' if number == note.line else ' '} {number:>{width}} | {line}".rstrip()
                         for number, line in note.excerpt)
        fence = _fence(code)
        text += f"\n\nThe lines around it (the commented one marked >):\n\n{fence}\n{code}\n{fence}"
    return f"{text}\n\nThe comment:\n\n{_quoted(note.body)}"


def _fence(code: str) -> str:
    """A code fence longer than any run of backticks in ``code``, so no line of it can close the block."""
    longest = run = 0
    for char in code:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines())
