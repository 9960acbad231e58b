"""How a judgment and a failure classification read to a person: a pass/fail verdict with its issues, a
category in words with its evidence and confidence, and the technical facts set apart.

The side panel (through ``execution_detail``'s JSON) and the node page both show these readings, so
they say the same thing; the stored dicts stay as they are, shown raw one click away.

Pure functions over the stored dicts (``Judgment.as_dict()``, ``FailureClassification.as_dict()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.domain.failures import FailureClassification

CATEGORY_WORDS = {
    "ProductBug": "the product is wrong: a test or check found a bug in what was built",
    "TestBug": "the test itself is broken",
    "EnvFailure": "the environment failed, not the work",
    "ContractMismatch": "the output does not match the contract",
    "FlakyTest": "a flaky test: runs of the same test disagree",
    "Unknown": "the cause is not known",
}

_JUDGE_WORDS = {
    # The pages say "judged by <these words>".
    "none": "no one: the node asks for no judgment",
    "mechanical": "a mechanical check",
    "llm": "a judge agent",
    "command": "a command's exit code",
    "report": "an external executor's report",
    "merge_conflict": "merging the change into the run's branch",
    "write_set": "the files the node may write",
    "workspace_tampered": "the workspace's integrity check",
    "commands_disabled": "the project's command setting",
    "external_timeout": "the external executor's deadline",
}

# The judgment's own fields; everything else a judge adds is a technical fact.
_JUDGMENT_FIELDS = {"ok", "kind", "issues"}


def confidence_words(confidence: float) -> str:
    """How sure a classification is, in words, with its number: "likely (confidence 0.60)"."""
    if confidence <= 0:
        words = "a guess: nothing recognised it"
    elif confidence < 0.4:
        words = "possible"
    elif confidence < 0.7:
        words = "likely"
    elif confidence < 1:
        words = "very likely"
    else:
        words = "certain"
    return f"{words} (confidence {confidence:.2f})"


def failure_reading(stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A stored classification as it reads: ``category``, ``words`` (the category said plainly),
    ``confidence_text``, ``evidence`` lines, ``note``, and ``decided_by`` (which rule or the judge agent,
    a technical fact). None for an attempt without one."""
    failure = FailureClassification.from_dict(stored)
    if failure is None:
        return None
    decided_by = "the judge agent" if failure.rule == "llm" else f"rule {failure.rule}" if failure.rule else ""
    return {
        "category": failure.category,
        "words": CATEGORY_WORDS.get(failure.category, failure.category),
        "confidence_text": confidence_words(failure.confidence),
        "evidence": failure.evidence,
        "note": failure.note,
        "decided_by": decided_by,
    }


def judgment_reading(stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A stored judgment as it reads: ``verdict`` (``pass`` or ``fail``), ``judged_by`` in words, its
    ``issues``, and ``facts``, the judge's other fields as ``[name, text]`` pairs (a command's exit code,
    a check's name) for a technical part. None for an attempt not judged yet."""
    if not stored:
        return None
    kind = str(stored.get("kind") or "")
    facts = [[name, _fact_text(value)] for name, value in stored.items() if name not in _JUDGMENT_FIELDS]
    return {
        "verdict": "pass" if stored.get("ok") else "fail",
        "kind": kind,
        "judged_by": _JUDGE_WORDS.get(kind, kind.replace("_", " ")),
        "issues": [str(issue) for issue in stored.get("issues") or [] if str(issue).strip()],
        "facts": facts,
    }


def _fact_text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(part) for part in value)
    if value is None:
        return "—"
    return str(value)
