"""Asking the judge agent to classify a failure the rules leave ``Unknown``: the prompt it is sent, and
the check and cap of its answer (the categories and caps are ``graphs.domain.failures``'s).

Pure functions over plain values: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.domain.failures import (
    CATEGORIES,
    EVIDENCE_LINES_MAX,
    UNKNOWN_CONFIDENCE,
    FailureCategory,
    FailureClassification,
    FailureFacts,
    confidence_cap,
    evidence_bounded,
)

# What the judge agent is shown of a failure, so its prompt stays small whatever the attempt printed.
PROMPT_ERROR_CHARS = 2000
PROMPT_ISSUES_MAX = 10
PROMPT_ISSUE_CHARS = 500
PROMPT_OUTPUT_CHARS = 4000

_CATEGORY_GUIDE = (
    "- ProductBug: assertion failures showing the implementation behaves wrongly, while collection and the"
    " commands themselves worked.\n"
    "- TestBug: broken test code, wrong expectations, bad fixtures, collection or import errors in the tests.\n"
    "- EnvFailure: a missing tool or setting, a service down, a runtime or infrastructure failure.\n"
    "- ContractMismatch: the attempt broke what its node had to deliver (format, paths, mode).\n"
    "- Unknown: the evidence does not say.\n"
)


def failure_prompt(*, node_id: str, facts: FailureFacts) -> str:
    """The judge agent's bounded request to classify one failed attempt. Built by concatenation: the
    attempt's text may hold braces, which ``str.format`` would read as placeholders."""
    issues = [str(issue)[:PROMPT_ISSUE_CHARS] for issue in (facts.judgment or {}).get("issues") or []]
    parts = [
        "Classify why one attempt of a work-graph node failed. Answer with ONE JSON object and nothing"
        ' else: {"category": "<one category>", "confidence": <0 to 1>, "evidence": ["<line>", ...]}.\n\n'
        "Categories:\n" + _CATEGORY_GUIDE + "\n"
        "Rules: this is a single run, so never answer FlakyTest. Confidence is at most 0.75 for ProductBug"
        " and at most 0.6 for every other category. Every evidence line quotes or names something shown"
        " below; give at most " + str(EVIDENCE_LINES_MAX) + " lines.\n",
        "## Node\n\n" + node_id,
    ]
    if facts.agent_error_kind:
        parts.append("## Agent error kind\n\n" + facts.agent_error_kind)
    if facts.judgment_kind:
        parts.append("## Judgment kind\n\n" + facts.judgment_kind)
    if facts.error:
        parts.append("## Error\n\n" + facts.error[:PROMPT_ERROR_CHARS])
    if issues:
        parts.append("## Issues\n\n" + "\n".join("- " + issue for issue in issues[:PROMPT_ISSUES_MAX]))
    if facts.output.strip():
        parts.append("## The end of the attempt's output\n\n" + facts.output[-PROMPT_OUTPUT_CHARS:])
    return "\n\n".join(parts) + "\n"



def failure_answer_validate(answer: Mapping[str, Any] | None) -> FailureClassification:
    """Take the judge agent's ``{category, confidence, evidence[]}`` answer, capped; an answer that
    breaks the contract is ``Unknown`` with the reason in its note.

    ``FlakyTest`` is refused: the agent sees one failed run, and one run never shows a test flaky.
    """
    if not isinstance(answer, Mapping):
        return _unknown_because("the judge agent's answer held no JSON object")
    category = answer.get("category")
    if category not in CATEGORIES:
        return _unknown_because(f"the judge agent named no known category (got {str(category)[:80]!r})")
    if category == FailureCategory.FLAKY_TEST:
        return _unknown_because("the judge agent answered FlakyTest, which one failed run cannot show")
    confidence = answer.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        return _unknown_because("the judge agent's confidence is not a number from 0 to 1")
    evidence = answer.get("evidence")
    if not isinstance(evidence, list) or not all(isinstance(line, str) for line in evidence):
        return _unknown_because("the judge agent's evidence is not a list of lines")
    if category != FailureCategory.UNKNOWN and not any(line.strip() for line in evidence):
        return _unknown_because("the judge agent gave no evidence for its category")
    capped = min(float(confidence), confidence_cap(category))
    return FailureClassification(category=category, confidence=capped, evidence=evidence_bounded(evidence),
                                 rule="llm")


def _unknown_because(reason: str) -> FailureClassification:
    return FailureClassification(category=FailureCategory.UNKNOWN, confidence=UNKNOWN_CONFIDENCE, rule="llm",
                                 note=f"fell back to Unknown: {reason}")


# --- root causes -------------------------------------------------------------------------------------------
