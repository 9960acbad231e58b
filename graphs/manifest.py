"""Pure functions over ``graph_manifest`` dicts: find one in an agent's free text, normalize it,
validate it, and answer the graph questions the engine asks.

No Django and no I/O. Nothing here recurses, so deep or hostile input never raises RecursionError.
"""

from __future__ import annotations

import heapq
import json
import re
from array import array
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from graphs.storable import json_transform

ARTIFACT_TYPES = ("brd", "prd", "sdd", "benchmark", "test_dataset", "test_script", "test_case_manifest")
EDGE_TYPES = ("zero_token", "needs_judgment", "on_failure")
JUDGMENT_KINDS = ("none", "mechanical", "llm", "command")
ON_FAIL_ACTIONS = ("retry_self", "loop_back", "hard_fail", "dynamic_loop_back")
RESERVED_PREFIX = "__"
# The longest value of each field the console stores in a column of its own (a node's id on every
# attempt and loop-back, its org node, a promoted artifact's type, a skill's slug): a longer one
# could not be stored, so it is a validation error like any other.
FIELD_MAX_LENGTHS = {"node_id": 200, "subagent_type": 100, "skill_ref": 100, "node_type": 100}
PROMOTED_ARTIFACT_TYPE_MAX_LENGTH = 100
# A command (a command node's or a command judgment's argv) is bounded like every stored string.
COMMAND_MAX_ARGS = 100
COMMAND_ARG_MAX_LENGTH = 4000
# A command node runs no agent, so the fields that steer one would be silently ignored on it: they are
# refused instead, as a planning slip the repair request can name.
COMMAND_NODE_AGENT_FIELDS = ("artifact_type", "task_prompt", "skill_ref", "allowed_tools", "max_turns",
                             "max_tool_iterations")
# ``executor: external``: the node waits for a collaboration report instead of calling an agent. Its
# reported output is judged in the report's request, so only judgments that call no agent and run no
# program fit; the fields that steer an agent would be silently ignored, so they are refused.
EXECUTORS = ("agent", "external")
EXTERNAL_JUDGMENT_KINDS = ("none", "mechanical")
EXTERNAL_NODE_AGENT_FIELDS = ("allowed_tools", "max_turns", "max_tool_iterations")

# A node's tool_profile says whether its agent may have side effects (write) or only reads (read).
TOOL_PROFILES = ("read", "write")
# What a node's retry_policy may retry: the agents' transient kinds (graphs.agents.base.TRANSIENT_KINDS,
# which this module, free of Django, does not import; a test keeps the two equal).
RETRYABLE_KINDS = ("timeout", "network", "rate_limit", "unavailable")
# Bounds of a retry_policy, so one node cannot wait or retry without end.
RETRY_POLICY_MAX_RETRIES = 10
RETRY_POLICY_MAX_DELAY_SECONDS = 3600

# An edge without an edge_type still describes a dependency; normalization writes this type, the
# one that makes the agent read its input rather than skip reasoning about it.
DEFAULT_EDGE_TYPE = "needs_judgment"
_ON_FAILURE = "on_failure"


class ManifestError(ValueError):
    """A manifest broke one or more rules; ``errors`` holds one line per problem."""

    def __init__(self, errors: Iterable[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


# --- Extraction ----------------------------------------------------------------------------------

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


def _first_object(
    text: str, accept: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> dict[str, Any] | None:
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
    return _first_object(text, lambda candidate: candidate if all(k in candidate for k in required) else None)


def _manifest_in(candidate: dict[str, Any]) -> dict[str, Any] | None:
    if isinstance(candidate.get("nodes"), list):
        return candidate
    wrapped = candidate.get("graph_manifest")
    if isinstance(wrapped, dict) and isinstance(wrapped.get("nodes"), list):
        return wrapped
    return None


def extract_graph_manifest(text: str) -> dict[str, Any] | None:
    """The first object in ``text`` with a ``nodes`` list, or one wrapped under ``graph_manifest``.

    ``edges`` may be missing (normalization adds an empty list). The object is returned as found.
    """
    return _first_object(text, _manifest_in)


# --- Normalization -------------------------------------------------------------------------------


def normalize_graph_manifest_with_notes(
    manifest: Mapping[str, Any], existing_node_ids: Iterable[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """A normalized copy of ``manifest`` and one human-readable note per change made.

    A node keyed ``id`` gets ``node_id``; a missing or null ``depends_on`` becomes ``[]``; missing
    ``edges`` become ``[]``; an edge without ``edge_type`` gets ``needs_judgment``; every edge other
    than ``on_failure`` between known nodes (this manifest's, or ``existing_node_ids`` in append mode)
    is added to its target's ``depends_on``. Malformed parts are left for validation to report.
    """
    if not isinstance(manifest, Mapping):
        raise ManifestError(["manifest must be a JSON object"])
    result: dict[str, Any] = _json_copy(dict(manifest))
    notes: list[str] = []
    nodes = result.get("nodes")
    if not isinstance(nodes, list):
        return result, notes
    for index, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        if "node_id" not in node and "id" in node:
            node = nodes[index] = {"node_id": node["id"]} | {k: v for k, v in node.items() if k != "id"}
            notes.append(f"{_node_label(node, index)}: key 'id' renamed to 'node_id'")
        if node.get("depends_on") is None:
            node["depends_on"] = []
            notes.append(f"{_node_label(node, index)}: missing depends_on set to []")
    if result.get("edges") is None:
        result["edges"] = []
        notes.append("manifest: missing edges set to []")
    edges = result["edges"]
    if not isinstance(edges, list):
        return result, notes
    by_id: dict[str, dict[str, Any]] = {}
    for node in nodes:
        if isinstance(node, dict) and _is_id(node.get("node_id")):
            by_id.setdefault(node["node_id"], node)
    known = set(by_id) | set(existing_node_ids)
    for index, edge in enumerate(edges):
        if not isinstance(edge, dict):
            continue
        if edge.get("edge_type") is None:
            edge["edge_type"] = DEFAULT_EDGE_TYPE
            notes.append(f"{_edge_label(edge, index)}: missing edge_type set to {DEFAULT_EDGE_TYPE!r}")
        source, target = edge.get("from"), edge.get("to")
        if edge["edge_type"] == _ON_FAILURE or not (_is_id(source) and _is_id(target)):
            continue
        node = by_id.get(target)
        if node is None or source not in known or source == target:
            continue
        depends_on = node["depends_on"]
        if isinstance(depends_on, list) and source not in depends_on:
            depends_on.append(source)
            notes.append(f"node {target!r}: dependency on {source!r} back-filled from edge")
    return result, notes


def normalize_graph_manifest(
    manifest: Mapping[str, Any], existing_node_ids: Iterable[str] = ()
) -> dict[str, Any]:
    """A normalized copy of ``manifest``; see ``normalize_graph_manifest_with_notes``."""
    return normalize_graph_manifest_with_notes(manifest, existing_node_ids)[0]


def _json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data; ``copy.deepcopy`` recurses once per nesting level."""
    return json_transform(value, leaf=lambda item: item)


# --- Validation ----------------------------------------------------------------------------------


def validate_graph_manifest(
    manifest: Mapping[str, Any],
    existing_graph: Mapping[str, Sequence[str]] | None = None,
    *,
    max_nodes: int = 500,
    max_depth: int = 50,
) -> None:
    """Raise ManifestError listing every rule ``manifest`` breaks.

    In append mode ``manifest`` holds only the new nodes and ``existing_graph`` the run's nodes, each
    with its data dependencies (``data_dependencies`` of the run's manifest). Those nodes are valid
    dependency targets, and a loop-back target when they are upstream of the new node in the merged
    graph; new ids must not reuse them, and new edges must not add inputs to them. ``max_nodes``
    bounds the nodes in ``manifest``; ``max_depth`` bounds the longest dependency chain, where an
    existing node counts as one level (the caller measures the merged graph with ``graph_depth`` when
    it needs the exact figure). Missing ``depends_on``,
    ``edges`` and ``edge_type`` are read as normalization would fill them in.
    """
    errors = _manifest_errors(manifest, existing_graph or {}, max_nodes=max_nodes, max_depth=max_depth)
    if errors:
        raise ManifestError(errors)


def _manifest_errors(
    manifest: Any, existing_graph: Mapping[str, Sequence[str]], *, max_nodes: int, max_depth: int
) -> list[str]:
    existing = frozenset(existing_graph)
    if not isinstance(manifest, Mapping):
        return ["manifest must be a JSON object"]
    nodes, edges = manifest.get("nodes"), manifest.get("edges")
    errors = []
    if not isinstance(nodes, list):
        errors.append("manifest: nodes must be a list")
    elif not nodes:
        errors.append("manifest: nodes is empty; a plan needs at least one node")
    elif len(nodes) > max_nodes:
        errors.append(f"manifest: {len(nodes)} nodes, over the limit of {max_nodes}")
    if edges is not None and not isinstance(edges, list):
        errors.append("manifest: edges must be a list")
    if errors:
        return errors
    edges = edges or []

    named: list[tuple[str, dict[str, Any]]] = []
    for index, node in enumerate(nodes):
        if not isinstance(node, dict):
            errors.append(f"nodes[{index}]: must be an object")
        elif not _is_id(node.get("node_id")):
            errors.append(f"nodes[{index}]: node_id must be a non-empty string")
            errors.extend(_node_shape_errors(node, f"nodes[{index}]"))
        elif len(node["node_id"]) > FIELD_MAX_LENGTHS["node_id"]:
            errors.append(
                f"nodes[{index}]: node_id is {len(node['node_id'])} characters, over the limit of "
                f"{FIELD_MAX_LENGTHS['node_id']}"
            )
            errors.extend(_node_shape_errors(node, f"nodes[{index}]"))
        else:
            named.append((node["node_id"], node))
            errors.extend(_node_shape_errors(node, f"node {node['node_id']!r}"))
    ids = [node_id for node_id, _ in named]
    own = set(ids)
    errors.extend(_id_errors(ids, existing))

    dependencies: dict[str, dict[str, None]] = {node_id: {} for node_id in ids}
    for node_id, node in named:
        depends_on = node.get("depends_on")
        for dep in depends_on if isinstance(depends_on, list) else ():
            if not _is_id(dep):
                continue  # already reported as a malformed depends_on
            if dep == node_id:
                errors.append(f"node {node_id!r}: depends on itself")
            elif dep not in own and dep not in existing:
                errors.append(f"node {node_id!r}: depends_on names unknown node {dep!r}")
            else:
                dependencies[node_id][dep] = None

    failure_edges: dict[str, list[str]] = {}
    for index, edge in enumerate(edges):
        if not isinstance(edge, dict):
            errors.append(f"edges[{index}]: must be an object")
            continue
        source, target, edge_type = edge.get("from"), edge.get("to"), edge.get("edge_type")
        label = _edge_label(edge, index)
        if not (_is_id(source) and _is_id(target)):
            errors.append(f"{label}: from and to must be non-empty node_id strings")
            continue
        if edge_type is not None and edge_type not in EDGE_TYPES:
            errors.append(f"{label}: edge_type {edge_type!r} is not one of {_choices(EDGE_TYPES)}")
            continue
        unknown = [end for end in (source, target) if end not in own and end not in existing]
        if unknown:
            errors.append(f"{label}: names unknown node {' and '.join(map(repr, unknown))}")
            continue
        if source == target:
            errors.append(f"{label}: self-loop (a node cannot feed or loop back to itself)")
        elif edge_type == _ON_FAILURE:
            if source not in own:
                errors.append(
                    f"{label}: on_failure edge from {source!r}, which is not a node of this manifest"
                )
            else:
                failure_edges.setdefault(source, []).append(target)
        elif target not in own:
            errors.append(
                f"{label}: data edge into existing node {target!r}; appended nodes cannot add "
                "inputs to nodes already in the run"
            )
        else:
            dependencies[target][source] = None

    graph = {node_id: list(deps) for node_id, deps in dependencies.items()}
    order, cycles = _topological(ids, graph)
    errors.extend(map(_cycle_message, cycles))
    errors.extend(_on_fail_errors(named, failure_edges, {**existing_graph, **graph}))
    if not cycles:
        errors.extend(_depth_errors(order, graph, max_depth))
    return errors


def _node_shape_errors(node: dict[str, Any], label: str) -> list[str]:
    errors = []
    depends_on = node.get("depends_on")
    if depends_on is not None and not (isinstance(depends_on, list) and all(_is_id(d) for d in depends_on)):
        errors.append(f"{label}: depends_on must be a list of node_id strings")

    has_artifact, has_prompt = "artifact_type" in node, "task_prompt" in node
    if not is_command_node(node) and ("timeout_seconds" in node or "expect_exit" in node):
        errors.append(f"{label}: timeout_seconds and expect_exit belong to command nodes (nodes with a command)")
    errors.extend(_executor_errors(node, label))
    if is_command_node(node):
        errors.extend(_command_node_errors(node, label))
    elif has_artifact and has_prompt:
        errors.append(f"{label}: has both artifact_type and task_prompt; a node takes exactly one")
    elif not (has_artifact or has_prompt):
        errors.append(
            f"{label}: needs artifact_type (a catalog node), task_prompt (a generic node) or command (a command node)"
        )
    elif has_artifact and node["artifact_type"] not in ARTIFACT_TYPES:
        errors.append(
            f"{label}: artifact_type {node['artifact_type']!r} is not one of {_choices(ARTIFACT_TYPES)}"
        )
    elif has_prompt and not (isinstance(node["task_prompt"], str) and node["task_prompt"].strip()):
        errors.append(f"{label}: task_prompt must be a non-empty string")

    judgment = node.get("judgment")
    if judgment is not None:
        kind = judgment.get("kind") if isinstance(judgment, dict) else None
        if not isinstance(judgment, dict):
            errors.append(f"{label}: judgment must be an object")
        elif kind not in JUDGMENT_KINDS:
            errors.append(f"{label}: judgment.kind {kind!r} is not one of {_choices(JUDGMENT_KINDS)}")
        elif kind == "llm" and not (
            isinstance(judgment.get("judge_prompt"), str) and "{content}" in judgment["judge_prompt"]
        ):
            errors.append(
                f"{label}: an llm judgment needs a judge_prompt containing the {{content}} placeholder"
            )
        elif kind == "mechanical" and not _is_id(judgment.get("check_ref")):
            errors.append(f"{label}: a mechanical judgment needs check_ref naming the check")
        elif kind == "command":
            errors.extend(_command_errors(judgment.get("command"), f"{label}: judgment.command"))
            errors.extend(_timeout_errors(judgment.get("timeout_seconds"), f"{label}: judgment.timeout_seconds"))

    on_fail = node.get("on_fail")
    if on_fail is not None:
        if not isinstance(on_fail, dict):
            errors.append(f"{label}: on_fail must be an object")
        else:
            action, attempts = on_fail.get("action"), on_fail.get("max_attempts")
            if action not in ON_FAIL_ACTIONS:
                errors.append(f"{label}: on_fail.action {action!r} is not one of {_choices(ON_FAIL_ACTIONS)}")
            if attempts is not None and (
                isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1
            ):
                errors.append(f"{label}: on_fail.max_attempts must be a positive integer, not {attempts!r}")
            if action == "dynamic_loop_back":
                errors.extend(_dynamic_loop_back_errors(node, label))

    for paths in ("write_set", "forbidden_paths"):
        globs = node.get(paths)
        if globs is not None and not (
            isinstance(globs, list) and all(isinstance(glob, str) and glob.strip() for glob in globs)
        ):
            errors.append(f"{label}: {paths} must be a list of path globs")

    tool_profile = node.get("tool_profile")
    if tool_profile is not None and tool_profile not in TOOL_PROFILES:
        errors.append(f"{label}: tool_profile {tool_profile!r} is not one of {_choices(TOOL_PROFILES)}")
    if "retry_policy" in node:
        errors.extend(_retry_policy_errors(node["retry_policy"], f"{label}: retry_policy"))

    max_turns = node.get("max_turns")
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
        errors.append(f"{label}: max_turns must be a positive integer, not {max_turns!r}")

    promotes = node.get("promotes_to_artifact")
    if promotes is not None and not (isinstance(promotes, dict) and _is_id(promotes.get("artifact_type"))):
        errors.append(f"{label}: promotes_to_artifact must be an object with a non-empty artifact_type")
    elif promotes is not None and len(promotes["artifact_type"]) > PROMOTED_ARTIFACT_TYPE_MAX_LENGTH:
        errors.append(
            f"{label}: promotes_to_artifact.artifact_type is {len(promotes['artifact_type'])} characters, "
            f"over the limit of {PROMOTED_ARTIFACT_TYPE_MAX_LENGTH}"
        )
    for key in ("subagent_type", "skill_ref", "node_type"):
        if node.get(key) is not None and not _is_id(node[key]):
            errors.append(f"{label}: {key} must be a non-empty string")
        elif node.get(key) is not None and len(node[key]) > FIELD_MAX_LENGTHS[key]:
            errors.append(
                f"{label}: {key} is {len(node[key])} characters, over the limit of {FIELD_MAX_LENGTHS[key]}"
            )
    return errors


def is_command_node(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` is a command node: it runs its ``command`` instead of calling an agent."""
    return "command" in node


def is_external_node(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` is done outside the engine (``executor: external``): it waits for a report."""
    return node.get("executor") == "external"


def _executor_errors(node: dict[str, Any], label: str) -> list[str]:
    executor = node.get("executor")
    if executor is not None and executor not in EXECUTORS:
        return [f"{label}: executor {executor!r} is not one of {_choices(EXECUTORS)}"]
    if not is_external_node(node):
        return [f"{label}: deadline_seconds belongs to external nodes (executor: external)"] if (
            "deadline_seconds" in node) else []
    errors = [f"{label}: an external node runs no agent, so it takes no {field}"
              for field in EXTERNAL_NODE_AGENT_FIELDS if field in node]
    if is_command_node(node):
        errors.append(f"{label}: an external node runs no command; drop command or executor")
    kind = (node.get("judgment") or {}).get("kind", "none") if isinstance(node.get("judgment"), dict) else None
    if kind is not None and kind not in EXTERNAL_JUDGMENT_KINDS:
        errors.append(f"{label}: an external node's report is judged as it arrives, so its judgment.kind must be"
                      f" one of {_choices(EXTERNAL_JUDGMENT_KINDS)}, not {kind!r}")
    elif kind == "mechanical" and node["judgment"].get("check_ref") == "verdict_says_pass":
        # A report writes its own text: a verdict it carries would pass the check it is judged by.
        errors.append(f"{label}: an external node's report cannot carry the verdict it is judged by; a verdict gate"
                      " (verdict_says_pass) reads an agent's verdict, so it is never external")
    errors.extend(_timeout_errors(node.get("deadline_seconds"), f"{label}: deadline_seconds"))
    return errors


def node_commands(node: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The commands ``node`` runs, as (``"node"`` or ``"judgment"``, argv): its own, and its judgment's."""
    commands = []
    if is_command_node(node):
        commands.append(("node", list(node["command"])))
    judgment = node.get("judgment")
    if isinstance(judgment, Mapping) and judgment.get("kind") == "command":
        commands.append(("judgment", list(judgment.get("command") or [])))
    return commands


def manifest_commands(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every command the manifest's nodes run, in manifest order: ``node_id``, ``runs_as`` (``node`` or
    ``judgment``), ``argv`` and ``timeout_seconds`` (None: the console's default)."""
    listed = []
    for node in manifest.get("nodes") or []:
        if not isinstance(node, Mapping):
            continue
        for runs_as, argv in node_commands(node):
            spec = node if runs_as == "node" else node["judgment"]
            listed.append({"node_id": node.get("node_id"), "runs_as": runs_as, "argv": argv,
                           "timeout_seconds": spec.get("timeout_seconds")})
    return listed


def _command_node_errors(node: dict[str, Any], label: str) -> list[str]:
    errors = [
        f"{label}: a command node runs no agent, so it takes no {field}"
        for field in COMMAND_NODE_AGENT_FIELDS
        if field in node
    ]
    errors.extend(_command_errors(node["command"], f"{label}: command"))
    errors.extend(_timeout_errors(node.get("timeout_seconds"), f"{label}: timeout_seconds"))
    expect_exit = node.get("expect_exit")
    if expect_exit is not None and (isinstance(expect_exit, bool) or not isinstance(expect_exit, int)):
        errors.append(f"{label}: expect_exit must be an integer exit code, not {expect_exit!r}")
    return errors


def _command_errors(command: Any, label: str) -> list[str]:
    """A command is an argv: a non-empty list of non-empty strings, run without a shell."""
    if not isinstance(command, list) or not command:
        return [f"{label} must be a non-empty list of strings (the program and its arguments), not {command!r}"]
    if len(command) > COMMAND_MAX_ARGS:
        return [f"{label} has {len(command)} arguments, over the limit of {COMMAND_MAX_ARGS}"]
    errors = []
    for index, arg in enumerate(command):
        if not isinstance(arg, str) or not arg:
            errors.append(f"{label}[{index}] must be a non-empty string, not {arg!r}")
        elif len(arg) > COMMAND_ARG_MAX_LENGTH:
            errors.append(f"{label}[{index}] is {len(arg)} characters, over the limit of {COMMAND_ARG_MAX_LENGTH}")
        elif "\x00" in arg:
            errors.append(f"{label}[{index}] contains a NUL character")
    return errors


def _retry_policy_errors(policy: Any, label: str) -> list[str]:
    """A retry policy: ``max_retries`` (0 to the limit), optional ``delays_seconds`` (the wait before
    each retry, the last one repeating) and optional ``kinds`` (which transient errors it retries)."""
    if not isinstance(policy, dict):
        return [f"{label} must be an object with max_retries, and optionally delays_seconds and kinds"]
    fields = ("max_retries", "delays_seconds", "kinds")
    errors = [f"{label}: unknown field {key!r}" for key in policy if key not in fields]
    retries = policy.get("max_retries")
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= RETRY_POLICY_MAX_RETRIES:
        errors.append(f"{label}.max_retries must be an integer from 0 to {RETRY_POLICY_MAX_RETRIES}, not {retries!r}")
    delays = policy.get("delays_seconds")
    if delays is not None and not (
        isinstance(delays, list) and delays and len(delays) <= RETRY_POLICY_MAX_RETRIES
        and all(not isinstance(d, bool) and isinstance(d, int | float) and 0 <= d <= RETRY_POLICY_MAX_DELAY_SECONDS
                for d in delays)
    ):
        errors.append(
            f"{label}.delays_seconds must be a list of 1 to {RETRY_POLICY_MAX_RETRIES} numbers of seconds from 0 to "
            f"{RETRY_POLICY_MAX_DELAY_SECONDS}, not {delays!r}"
        )
    kinds = policy.get("kinds")
    if kinds is not None and not (isinstance(kinds, list) and kinds and all(kind in RETRYABLE_KINDS for kind in kinds)):
        errors.append(f"{label}.kinds must be a non-empty list of {_choices(RETRYABLE_KINDS)}, not {kinds!r}")
    return errors


def _timeout_errors(timeout: Any, label: str) -> list[str]:
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1):
        return [f"{label} must be a positive integer number of seconds, not {timeout!r}"]
    return []


def _dynamic_loop_back_errors(node: dict[str, Any], label: str) -> list[str]:
    errors = []
    if node.get("node_type") != "final_verdict":
        errors.append(
            f"{label}: dynamic_loop_back is only allowed on a node with node_type 'final_verdict', "
            f"not {node.get('node_type')!r}"
        )
    subagent = node.get("subagent_type")
    if subagent is not None and subagent != "validator":
        errors.append(f"{label}: dynamic_loop_back belongs to the validator, not subagent_type {subagent!r}")
    return errors


def _id_errors(ids: list[str], existing: frozenset[str]) -> list[str]:
    errors = []
    for node_id, count in Counter(ids).items():
        if node_id.startswith(RESERVED_PREFIX):
            errors.append(
                f"node {node_id!r}: node_ids starting with {RESERVED_PREFIX!r} are reserved for "
                "planning nodes"
            )
        if count > 1:
            errors.append(f"node {node_id!r}: node_id is used by {count} nodes")
        if node_id in existing:
            errors.append(f"node {node_id!r}: node_id already exists in the run")
    return errors


def _on_fail_errors(
    named: list[tuple[str, dict[str, Any]]],
    failure_edges: dict[str, list[str]],
    merged_graph: Mapping[str, Sequence[str]],
) -> list[str]:
    """loop_back needs exactly one on_failure edge, to a node upstream of it in the merged graph (the
    run's and the new nodes); nothing else may have one.

    An on_failure edge on a node without loop_back would never be followed, which is almost always
    a planning slip (a forgotten action, or an edge on the wrong node), so it is an error too.
    """
    errors = []
    actions = {
        node_id: node["on_fail"].get("action") if isinstance(node.get("on_fail"), dict) else None
        for node_id, node in named
    }
    for node_id, targets in failure_edges.items():
        if actions.get(node_id) != "loop_back":
            errors.extend(
                f"edge {node_id!r} -> {target!r}: on_failure edge from node {node_id!r}, whose "
                "on_fail.action is not loop_back"
                for target in targets
            )
    for node_id, action in actions.items():
        if action != "loop_back":
            continue
        targets = failure_edges.get(node_id, [])
        if len(targets) != 1:
            named_targets = f" (to {', '.join(map(repr, targets))})" if targets else ""
            errors.append(
                f"node {node_id!r}: on_fail.action is loop_back, which needs exactly one on_failure "
                f"edge from it; it has {len(targets)}{named_targets}"
            )
        elif targets[0] not in _reachable(node_id, merged_graph):
            errors.append(
                f"node {node_id!r}: loop_back target {targets[0]!r} is not an upstream dependency "
                f"of {node_id!r}"
            )
    return errors


def _depth_errors(order: list[str], graph: dict[str, list[str]], max_depth: int) -> list[str]:
    chains = _longest_chains(order, graph)
    too_deep = [(length, start, node_id) for node_id, (length, start) in chains.items() if length > max_depth]
    if not too_deep:
        return []
    length, start, end = max(too_deep, key=lambda chain: chain[0])
    return [
        f"dependency chain {start!r} -> ... -> {end!r} is {length} nodes deep, over the limit of {max_depth}"
    ]


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _choices(values: Iterable[str]) -> str:
    return ", ".join(values)


def _node_label(node: dict[str, Any], index: int) -> str:
    node_id = node.get("node_id")
    return f"node {node_id!r}" if _is_id(node_id) else f"nodes[{index}]"


def _edge_label(edge: dict[str, Any], index: int) -> str:
    source, target = edge.get("from"), edge.get("to")
    return f"edge {source!r} -> {target!r}" if _is_id(source) and _is_id(target) else f"edges[{index}]"


# --- Graph queries ---------------------------------------------------------------------------------
# These read a manifest that passed validation (a run's stored, merged manifest). Dependencies come
# from depends_on and from data edges alike; on_failure edges are control flow, never dependencies.


def manifest_node_ids(manifest: Mapping[str, Any]) -> list[str]:
    """The node_ids in manifest order."""
    return [
        node["node_id"]
        for node in manifest.get("nodes") or []
        if isinstance(node, dict) and "node_id" in node
    ]


def data_dependencies(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each node's direct dependencies, without duplicates.

    A dependency on a node outside the manifest (an existing node, when this is an append) is left
    out: it is not this manifest's to schedule.
    """
    ids = manifest_node_ids(manifest)
    dependencies: dict[str, dict[str, None]] = {node_id: {} for node_id in ids}
    for node in manifest.get("nodes") or []:
        if isinstance(node, dict) and node.get("node_id") in dependencies:
            for dep in node.get("depends_on") or []:
                if dep in dependencies:
                    dependencies[node["node_id"]][dep] = None
    for edge in manifest.get("edges") or []:
        source, target = edge.get("from"), edge.get("to")
        if edge.get("edge_type") != _ON_FAILURE and source in dependencies and target in dependencies:
            dependencies[target][source] = None
    return {node_id: list(deps) for node_id, deps in dependencies.items()}


def topological_order(manifest: Mapping[str, Any]) -> list[str]:
    """Every node after its dependencies; among nodes ready together, manifest order decides.

    Raises ManifestError naming the cycle when the dependencies are not a DAG.
    """
    order, cycles = _topological(manifest_node_ids(manifest), data_dependencies(manifest))
    if cycles:
        raise ManifestError(map(_cycle_message, cycles))
    return order


def upstream_of(manifest: Mapping[str, Any], node_id: str) -> set[str]:
    """Every node ``node_id`` depends on, directly or not. KeyError for an unknown node."""
    return _reachable(node_id, _checked(data_dependencies(manifest), node_id))


def downstream_of(manifest: Mapping[str, Any], node_id: str) -> set[str]:
    """Every node that depends on ``node_id``, directly or not. KeyError for an unknown node."""
    return _reachable(node_id, _checked(_dependents(data_dependencies(manifest)), node_id))


def nodes_between(manifest: Mapping[str, Any], *, target: str, failing: str) -> list[str]:
    """What a loop-back from ``failing`` to ``target`` reruns, in topological order.

    That is ``target``, ``failing`` and every node on a data path from one to the other. Raises
    KeyError for an unknown node and ValueError when ``target`` is not upstream of ``failing``.
    """
    dependencies = data_dependencies(manifest)
    upstream = _reachable(failing, _checked(dependencies, failing))
    _checked(dependencies, target)
    if target != failing and target not in upstream:
        raise ValueError(f"{target!r} is not upstream of {failing!r}")
    rerun = (_reachable(target, _dependents(dependencies)) & upstream) | {target, failing}
    return [node_id for node_id in topological_order(manifest) if node_id in rerun]


def loop_back_target(manifest: Mapping[str, Any], node_id: str) -> str | None:
    """Where ``node_id``'s on_failure edge points, or None when it has none. KeyError for an unknown node."""
    if node_id not in manifest_node_ids(manifest):
        raise KeyError(node_id)
    for edge in manifest.get("edges") or []:
        if edge.get("edge_type") == _ON_FAILURE and edge.get("from") == node_id:
            return edge.get("to")
    return None


def merge_manifests(existing: Mapping[str, Any], addition: Mapping[str, Any]) -> dict[str, Any]:
    """A new manifest: ``existing``'s nodes and edges followed by ``addition``'s.

    Nothing is checked here; validate the addition against the existing node_ids first.
    """
    merged: dict[str, Any] = _json_copy(dict(existing))
    merged["nodes"] = merged.get("nodes") or []
    merged["edges"] = merged.get("edges") or []
    merged["nodes"].extend(_json_copy(list(addition.get("nodes") or [])))
    merged["edges"].extend(_json_copy(list(addition.get("edges") or [])))
    return merged


def graph_depth(manifest: Mapping[str, Any]) -> int:
    """Nodes on the longest dependency chain; 0 for an empty manifest. ManifestError on a cycle."""
    chains = _longest_chains(topological_order(manifest), data_dependencies(manifest))
    return max((length for length, _ in chains.values()), default=0)


def _checked(graph: dict[str, list[str]], node_id: str) -> dict[str, list[str]]:
    if node_id not in graph:
        raise KeyError(node_id)
    return graph


def _dependents(dependencies: dict[str, list[str]]) -> dict[str, list[str]]:
    dependents: dict[str, list[str]] = {node_id: [] for node_id in dependencies}
    for node_id, deps in dependencies.items():
        for dep in deps:
            if dep in dependents:
                dependents[dep].append(node_id)
    return dependents


def _reachable(start: str, graph: Mapping[str, Sequence[str]]) -> set[str]:
    """Nodes reachable from ``start`` along ``graph``, not counting ``start`` unless on a cycle."""
    seen: set[str] = set()
    pending = deque(graph.get(start, ()))
    while pending:
        node_id = pending.popleft()
        if node_id not in seen:
            seen.add(node_id)
            pending.extend(graph.get(node_id, ()))
    return seen


def _topological(ids: list[str], dependencies: Mapping[str, list[str]]) -> tuple[list[str], list[list[str]]]:
    """Kahn's algorithm, taking the earliest ready node in manifest order; returns (order, cycles).

    Dependencies on nodes outside ``ids`` count as met.
    """
    position = {node_id: index for index, node_id in reversed(list(enumerate(ids)))}
    waiting = {node_id: sum(dep in position for dep in dependencies.get(node_id, ())) for node_id in position}
    dependents = _dependents({node_id: list(dependencies.get(node_id, ())) for node_id in position})
    ready = [position[node_id] for node_id, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node_id = ids[heapq.heappop(ready)]
        order.append(node_id)
        for dependent in dependents[node_id]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, position[dependent])
    if len(order) == len(position):
        return order, []
    return order, _cycles_among({node_id for node_id, count in waiting.items() if count}, ids, dependencies)


def _cycles_among(stuck: set[str], ids: list[str], dependencies: Mapping[str, list[str]]) -> list[list[str]]:
    """Distinct cycles among the nodes Kahn's algorithm could not place.

    Each of them waits on another one of them, so following such a dependency from any of them
    must come back to a node already on the walk: that stretch is a cycle. Nodes merely downstream
    of a cycle end their walk on an earlier walk instead and are not reported.
    """
    cycles = []
    visited: set[str] = set()
    for start in ids:
        if start not in stuck or start in visited:
            continue
        walk: dict[str, int] = {}
        node_id = start
        while node_id not in visited and node_id not in walk:
            walk[node_id] = len(walk)
            node_id = next(dep for dep in dependencies[node_id] if dep in stuck)
        if node_id in walk:
            loop = list(walk)[walk[node_id] :]
            cycles.append([*loop, node_id])
        visited.update(walk)
    return cycles


def _cycle_message(cycle: list[str]) -> str:
    return "dependency cycle: " + " -> ".join(map(repr, cycle)) + " (each node depends on the next)"


def _longest_chains(order: list[str], dependencies: Mapping[str, list[str]]) -> dict[str, tuple[int, str]]:
    """For each node in ``order``: (nodes on the longest chain ending at it, the chain's first node).

    A dependency outside ``order`` (an existing node in append mode) counts as a one-node chain.
    """
    chains: dict[str, tuple[int, str]] = {}
    for node_id in order:
        length, start = 1, node_id
        for dep in dependencies.get(node_id, ()):
            dep_length, dep_start = chains.get(dep, (1, dep))
            if dep_length + 1 > length:
                length, start = dep_length + 1, dep_start
        chains[node_id] = (length, start)
    return chains
