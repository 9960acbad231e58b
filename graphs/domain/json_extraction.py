"""Finding JSON in an agent's free text: the first object that decodes, wherever it sits.

Agents wrap JSON in prose, fences and code whose strings hold braces of their own, so every ``{``
that could start an object is a candidate, tried in document order; nothing is found by regex.
Nothing here recurses, so deep or hostile input never raises RecursionError.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

# The json C scanner recurses once per nesting level and shares the interpreter's recursion budget
# with whoever calls us, so a span nested deeper than this is never handed to it. Real manifests
# nest about five levels deep.
_MAX_JSON_NESTING = 100

# Only a brace followed by a quote or a closing brace can start a JSON object. The scan for them runs
# over a byte copy of the text (see _BracketSpans.objects_from).
_OBJECT_START = re.compile(rb'\{[ \t\n\r]*["}]')
_HIDDEN = 0  # what a read brace that no ``}`` closes is replaced with in that copy
# Decoding starts on this much of a candidate span; a number, literal or escape cut at the window's
# end fails within _TRUNCATION_MARGIN characters of it.
_FIRST_DECODE_WINDOW = 4096
_TRUNCATION_MARGIN = 16

# Outside strings a lexing step skips, in C, everything that cannot matter: text, backslashes and the
# strings no other reading can end with. Two readings that disagree about a string only agree again
# by ending strings at the same quote, and the later of the two opening quotes is then an escaped
# quote inside the earlier string: so a string that neither holds a backslash nor follows one is
# never such a meeting place, and the skip takes it. The step then takes what stopped it: a run of
# openers, a closer, or a string that could be a meeting place, whole when it is short (each reading
# that reaches it matches it again, which costs little). A longer or unterminated one is left at its
# quote for _string_end, whose memo keeps long stretches of escapes from being walked once per
# reading. A step always matches: at the end of the text, with no group.
_LEXING_STEP = re.compile(
    r'(?:[^"{}\[\]\\]++|\\++(?!")|"[^"\\\x00-\x1f]*+")*+'
    r'(?:([{\[]++)|([}\]])|\\*+("(?:[^"\\\x00-\x1f]|\\.){0,64}+")|\\*+("))?',
    re.DOTALL,
)
_OPENERS, _CLOSER, _SHORT_STRING = 1, 2, 3  # the step's groups; group 4 is a string left at its quote
# Inside a string only these matter; a raw control character cannot appear in a JSON string.
_STRING_SPECIAL = re.compile(r'["\\\x00-\x1f]')
# Parent links that are not places. _UNSEEN: no lexing path has read this place as a bracket, or it
# is an opener inside a run, whose parent is the opener before it. _IN_RUN: the last opener of a run
# of several, whose parent is the opener before it too, marked so that a candidate there counts as read.
_UNSEEN = -2
_IN_RUN = -3


class _BracketSpans:
    """Where the bracket opened at a given ``{`` closes, found by lexing forward from it on demand.

    A lexing path started at a brace reads every quote as the start of a string, which goes wrong
    when the brace sits in prose or inside a string of an earlier object; so a brace no earlier path
    saw outside a string gets a path of its own. Two paths that stand at the same place outside a
    string read the same characters from then on, so the later one stops there and borrows the
    earlier one's results: its open brackets close where the earlier path's brackets at the same
    levels closed. Two paths first stand together right after a string that both end at the same
    quote, or where the later one resumes after the earlier one's outermost bracket closed; each
    path notes its innermost open bracket at those places, after every closer and every string that
    could be a meeting place (see _LEXING_STEP). Every place is therefore lexed about once, however
    many braces the text holds.

    What is written or read for every bracket and candidate (parent links, closes, nesting levels)
    lives in arrays, which cost less per write than dicts; the sparser results live in dicts.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        # The candidate scan's copy of the text, one byte per character; a character latin-1 lacks
        # becomes a "?", which is neither a brace nor a quote.
        self._scanned = bytearray(text, "latin-1", "replace")
        size = len(text) + 1
        self._parent = array("i", [_UNSEEN]) * size  # bracket -> enclosing bracket on its path, -1 for a root
        self._close = array("i", [-1]) * size  # bracket -> the bracket closing it, -1 while none does
        self._depth: dict[int, int] = {}  # closed bracket -> nesting levels inside it, itself included
        self._path: dict[int, int] = {}  # closed bracket -> the root whose lexing pushed it
        self._entries: dict[int, int] = {}  # meeting place -> the innermost open bracket of the path there
        # Deepest nesting closed so far under the open bracket at each level of the lexing path's
        # stack. A level is reset when its bracket closes, so a push writes nothing here.
        self._inner = array("i", [0]) * (text.count("{") + text.count("[") + 1)
        self._string_ends: dict[int, int] = {}  # special character inside a string -> that string's end

    def objects_from(self, pos: int) -> Iterator[tuple[int, int, int, int]]:
        """``(start, close, nesting, path)`` for each candidate ``{`` from ``pos`` closed by a ``}``.

        Lexing hides, in the scanned copy, every brace it reads until a ``}`` closes it, so the scan
        skips in C the braces that cannot be objects: hostile text holds a great many of them.
        """
        text, scanned, parent, close, depth, path, inner = (
            self._text, self._scanned, self._parent, self._close, self._depth, self._path, self._inner
        )
        find = _OBJECT_START.search
        # A fresh search each time: lexing writes to the copy ahead of the scan.
        while (opening := find(scanned, pos)) is not None:
            start = opening.start()
            pos = start + 1
            if parent[start] == _UNSEEN:
                open_brackets = self._lex(start)
                # The brackets left open keep their counts; the next path starts from zeros. Most
                # paths on hostile text end at their first meeting place with one bracket open.
                if open_brackets == 1:
                    inner[0] = 0
                elif open_brackets:
                    inner[:open_brackets] = array("i", [0]) * open_brackets
            end = close[start]
            if end >= 0 and text[end] == "}":
                yield start, end, depth[start], path[start]

    def _lex(self, root: int) -> int:
        """Lex the path started at ``root``; returns how many of its brackets are left open."""
        text, scanned, parent, close, depth, path, entries, inner = (
            self._text, self._scanned, self._parent, self._close, self._depth, self._path, self._entries,
            self._inner,
        )
        parent[root] = -1
        # The path's innermost open bracket and how many are open: the parent links are its stack.
        top, level = root, 1
        step_at = _LEXING_STEP.match
        pos = root + 1
        while True:
            # One match per step: most paths end within a few steps, and a match costs less than
            # setting up an iterator.
            step = step_at(text, pos)
            pos = step.end()
            kind = step.lastindex
            if kind == _OPENERS:
                # Inside a run each opener's parent is the one before it, so only the run's first
                # opener records its parent, and its last (the only one a candidate brace can be) is
                # marked as read.
                at = step.start(kind)
                parent[at] = top
                top = pos - 1
                if top != at:
                    parent[top] = _IN_RUN
                scanned[top] = _HIDDEN
                level += pos - at
            elif kind == _CLOSER:
                # Pairs are recorded whatever their kinds: a mismatch only makes that span invalid
                # JSON, which the decoder rejects, while the path itself goes on.
                at = pos - 1
                level -= 1
                nesting = inner[level] + 1
                inner[level] = 0
                close[top] = at
                depth[top] = nesting
                path[top] = root
                if text[at] == "}":
                    scanned[top] = ord(text[top])
                if not level:
                    return 0
                above = parent[top]
                top = top - 1 if above < -1 else above
                if nesting > inner[level - 1]:
                    inner[level - 1] = nesting
                # A later path that borrows this bracket's close resumes here.
                entries[pos] = top
            elif kind is None:
                return level  # the text ends with brackets open: none of them is balanced
            else:
                if kind != _SHORT_STRING:
                    end = self._string_end(step.start(kind))
                    if end < 0:
                        return level  # an unterminated string leaves every open bracket unbalanced
                    pos = end + 1
                theirs = entries.get(pos, -1)
                if theirs < 0:
                    entries[pos] = top
                    continue
                if close[theirs] < 0:
                    return level  # their innermost bracket never closes, so none of ours does
                pos, top, level = self._borrow(top, level, theirs, root)
                # Another path may have resumed here already.
                while pos >= 0 and (theirs := entries.get(pos, -1)) >= 0:
                    pos, top, level = self._borrow(top, level, theirs, root)
                if pos < 0:
                    return level
                entries[pos] = top

    def _borrow(self, ours: int, level: int, theirs: int, root: int) -> tuple[int, int, int]:
        """Close our open brackets where an earlier path's did, from ``ours`` and ``theirs`` (each
        path's innermost open bracket) out; ``level`` is how many of ours are open.

        Returns where to resume lexing, or -1 when there is nothing to lex: every bracket closed, or
        the earlier path's bracket never closed (so ours cannot); then our innermost open bracket and
        how many are still open.
        """
        text, scanned, close, depth, parent, path, inner = (
            self._text, self._scanned, self._close, self._depth, self._parent, self._path, self._inner
        )
        nesting = 0
        while True:
            end = close[theirs]
            if end < 0:
                return -1, ours, level
            if text[end] == "}":
                scanned[ours] = ord(text[ours])
            level -= 1
            # Their count also covers what they nested before the paths met: an overestimate, which
            # only makes the nesting guard more cautious.
            nesting = max(inner[level] + 1, nesting + 1, depth[theirs])
            inner[level] = 0
            close[ours] = end
            depth[ours] = nesting
            path[ours] = root
            if not level:
                return -1, ours, 0
            above = parent[ours]
            ours = ours - 1 if above < -1 else above
            above = parent[theirs]
            theirs = theirs - 1 if above < -1 else above
            if theirs < 0:
                inner[level - 1] = max(inner[level - 1], nesting)
                return end + 1, ours, level

    def _string_end(self, quote: int) -> int:
        """Where the string opened at ``quote`` closes, or -1 when it never does."""
        text, known = self._text, self._string_ends
        walked: list[int] = []
        pos = quote + 1
        while True:
            special = _STRING_SPECIAL.search(text, pos)
            if special is None:
                end = -1
                break
            at = special.start()
            if at in known:
                end = known[at]
                break
            walked.append(at)
            if text[at] == '"':
                end = at
                break
            if text[at] != "\\":
                end = -1
                break
            pos = at + 2
        # Strings opened at different quotes can run into each other through escaped quotes; the
        # memo keeps that from lexing the same stretch once per quote.
        known.update(dict.fromkeys(walked, end))
        return end


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The JSON objects in ``text``, in document order.

    Each ``{`` whose span decodes yields that object and then the objects nested in it; scanning
    resumes after it, so braces inside its strings are text, not candidates. Spans nested deeper
    than _MAX_JSON_NESTING never reach the decoder (objects inside them still do), and a span is
    skipped when a decode that enclosed it already failed inside it.
    """
    spans = _BracketSpans(text)
    decoder = json.JSONDecoder()
    failed_at: dict[int, int] = {}  # lexing path -> where the last decode that started on it failed
    objects = spans.objects_from(0)
    while (found := next(objects, None)) is not None:
        start, close, nesting, path = found
        if nesting > _MAX_JSON_NESTING:
            continue
        # On the same path, a span that encloses the failure point was decoded as part of the failed
        # value and would fail at the very same character.
        failure = failed_at.get(path)
        if failure is not None and start < failure <= close:
            continue
        value, end = _decode_object(decoder, text, start, close)
        if value is None:
            failed_at[path] = end
            continue
        yield from _dicts_in(value)
        objects = spans.objects_from(end)


def _decode_object(decoder: json.JSONDecoder, text: str, start: int, close: int) -> tuple[Any, int]:
    """(the object spanning ``text[start:close + 1]``, where it ends), or (None, where decoding failed).

    Decoding works on a copy of the span, first a short one that grows while the decoder keeps
    needing more: a JSONDecodeError counts the newlines before its position, which on the whole
    text would make every failed candidate cost the length of everything before it.
    """
    width = _FIRST_DECODE_WINDOW
    while True:
        stop = min(close + 1, start + width)
        window = text[start:stop]
        try:
            value, end = decoder.raw_decode(window)
        except json.JSONDecodeError as error:
            # Cutting the span short fails near the cut, or as an unterminated string anywhere.
            cut_short = stop <= close and (
                error.pos >= len(window) - _TRUNCATION_MARGIN or error.msg.startswith("Unterminated string")
            )
            if not cut_short:
                return None, start + error.pos
            width *= 4
        else:
            return value, start + end


def _dicts_in(value: Any) -> Iterator[dict[str, Any]]:
    """``value``'s dicts, outermost first and otherwise in document order."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            yield item
            pending.extend(reversed(item.values()))
        elif isinstance(item, list):
            pending.extend(reversed(item))


def first_json_object(
    text: str, accept: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> dict[str, Any] | None:
    """What ``accept`` makes of the first object in ``text`` it does not refuse (returns None for), or None."""
    for candidate in _json_objects(text):
        accepted = accept(candidate)
        if accepted is not None:
            return accepted
    return None


def extract_json_payload(text: str, required_keys: Iterable[str] = ()) -> dict[str, Any] | None:
    """The first JSON object in ``text`` holding every key in ``required_keys``, or None.

    A text that is one JSON object is its own first candidate; after that every ``{`` starts one,
    so prose, fences and code around or inside the JSON do not matter.
    """
    required = tuple(required_keys)
    return first_json_object(text, lambda candidate: candidate if all(k in candidate for k in required) else None)
