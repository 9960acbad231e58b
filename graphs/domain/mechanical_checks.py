"""Mechanical judgment checks: deterministic verdicts on a node's output, each a function of the text
(``Check``), and the readings of a validator's verdict lines. graphs.domain.check_registry names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from graphs.domain.catalogs import ROOT_CAUSE_CATEGORIES
from graphs.domain.json_extraction import extract_json_payload


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    issues: list[str] = field(default_factory=list)


Check = Callable[[str], CheckResult]


def check_script_compiles(content: str) -> CheckResult:
    """The output's Python script parses: the first fenced code block if there is one, else the whole text."""
    source = script_source(content)
    if not source.strip():
        return CheckResult(ok=False, issues=["the output holds no script"])
    try:
        # Compiled to bytecode, never parsed into ast objects: CPython 3.11's conversion to them keeps
        # one recursion count per interpreter, so two threads judging at once (the embedded mode's
        # executor) can fail each other with "AST constructor recursion depth mismatch".
        compile(source, "<node output>", "exec", dont_inherit=True)
    except SyntaxError as error:
        return CheckResult(ok=False, issues=[f"the script does not compile: {error.msg} (line {error.lineno})"])
    except (ValueError, RecursionError, MemoryError) as error:
        return CheckResult(ok=False, issues=[f"the script does not compile: {error}"])
    return CheckResult(ok=True)


def verdict_says_pass(content: str) -> CheckResult:
    """The first line that starts with ``VERDICT:`` says exactly ``pass`` (see ``first_verdict``)."""
    verdict = first_verdict(content)
    if verdict is None:
        return CheckResult(ok=False, issues=["the output has no line that starts with 'VERDICT:'"])
    if verdict.lower() == "pass":
        return CheckResult(ok=True)
    return CheckResult(ok=False, issues=[f"the verdict is {verdict!r}, not pass"])


def output_not_empty(content: str) -> CheckResult:
    if content.strip():
        return CheckResult(ok=True)
    return CheckResult(ok=False, issues=["the output is empty"])


def first_verdict(content: str) -> str | None:
    """Return what follows ``VERDICT:`` on the first line that starts with it, or None.

    Markdown emphasis (``**VERDICT: pass**``, ``**VERDICT:** _pass_``), a heading or quote marker and
    leading whitespace are ignored; a ``VERDICT:`` inside a sentence is not a verdict line, and only the
    first verdict line counts, so a later "VERDICT: pass" cannot overturn an earlier fail.
    """
    return _first_labelled_value(content, _VERDICT_LABEL)


@dataclass(frozen=True)
class FinalVerdict:
    """A validator's final verdict: ``PASS``, ``FAIL`` or ``INCONCLUSIVE``, and what it blames."""

    verdict: str
    line: str
    root_cause: str | None
    root_cause_detail: str


def final_verdict_read(content: str) -> FinalVerdict | None:
    """Read the final verdict of ``content``, or None when it has no verdict line.

    Only an exact ``pass`` is PASS; a first word ``fail``/``failed`` is FAIL; anything else
    (``inconclusive``, ``pass with notes``, ``request-revision``) is INCONCLUSIVE, since it is neither.
    """
    value = first_verdict(content)
    if value is None:
        return None
    word = _first_word(value)
    if value.lower() == "pass":
        verdict = "PASS"
    elif word in {"fail", "failed"}:
        verdict = "FAIL"
    else:
        verdict = "INCONCLUSIVE"
    category, detail = root_cause_read(content) if verdict != "PASS" else (None, "")
    return FinalVerdict(verdict=verdict, line=value, root_cause=category, root_cause_detail=detail)


def verdict_reasons(content: str) -> list[str]:
    """The lines after ``content``'s first verdict line that say why: neither a verdict nor a root cause
    line, nor a code fence, nor empty; each stripped. Empty when ``content`` has no verdict line."""
    lines = content.splitlines()
    labels = [_LINE_MARKERS.sub("", _EMPHASIS.sub("", line)) for line in lines]
    start = next((index for index, label in enumerate(labels) if _VERDICT_LABEL.match(label)), None)
    if start is None:
        return []
    return [line.strip() for line, label in zip(lines[start + 1:], labels[start + 1:], strict=True)
            if line.strip() and not line.strip().startswith("```")
            and not _VERDICT_LABEL.match(label) and not _ROOT_CAUSE_LABEL.match(label)]


def first_root_cause(content: str) -> str | None:
    """The root-cause category the content names (``planning``, ``coder``, ``skill_defect``), or None."""
    return root_cause_read(content)[0]


def root_cause_read(content: str) -> tuple[str | None, str]:
    """Return the category and detail of the content's root cause.

    Understood: the first line starting with ``ROOT_CAUSE:`` (or ``root_cause_category:``, ``Root cause:``)
    and, failing that, a JSON object with ``root_cause_category`` (and ``root_cause_detail``). A category
    outside ``ROOT_CAUSE_CATEGORIES`` is None, its words kept as the detail.
    """
    value = _first_labelled_value(content, _ROOT_CAUSE_LABEL)
    if value is not None:
        category, detail = _first_word(value), value.split(maxsplit=1)[1:]
        detail_text = detail[0].lstrip(_SEPARATORS).strip() if detail else ""
    else:
        payload = extract_json_payload(content, required_keys=("root_cause_category",)) or {}
        category = str(payload.get("root_cause_category") or "").strip().lower()
        detail_text = str(payload.get("root_cause_detail") or payload.get("detail") or "").strip()
        if not category:
            return None, ""
    if category in ROOT_CAUSE_CATEGORIES:
        return category, detail_text
    return None, value or category


def script_source(content: str) -> str:
    """The script an output holds: its first fenced code block if there is one, else the whole text."""
    source = first_code_block(content)
    return content if source is None else source


def first_code_block(content: str) -> str | None:
    """Return the body of the first fenced code block (```lang ... ```), or None."""
    lines = content.splitlines()
    start = None
    for index, line in enumerate(lines):
        if line.strip().startswith("```"):
            if start is None:
                start = index
            else:
                return "\n".join(lines[start + 1 : index])
    return None


_EMPHASIS = re.compile(r"[*`]+|\b_+|_+\b")  # keep the underscore inside ROOT_CAUSE
_SEPARATORS = ",;: -\N{EM DASH}\N{EN DASH}"
_LINE_MARKERS = re.compile(r"^[\s>#]*")
_VERDICT_LABEL = re.compile(r"verdict\s*:", re.IGNORECASE)
_ROOT_CAUSE_LABEL = re.compile(r"root[ _]cause(?:[ _]category)?\s*:", re.IGNORECASE)


def _first_labelled_value(content: str, label: re.Pattern[str]) -> str | None:
    for raw_line in content.splitlines():
        line = _LINE_MARKERS.sub("", _EMPHASIS.sub("", raw_line))
        found = label.match(line)
        if found:
            return line[found.end():].strip()
    return None


def _first_word(value: str) -> str:
    words = value.split()
    return words[0].strip(_SEPARATORS + ".!").lower() if words else ""
