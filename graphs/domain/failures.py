"""Classifying a failed attempt: a category, the evidence for it, and a capped confidence.

Deterministic rules come first (``FAILURE_RULES``, tried in order, the first match wins): the kind of
agent error, the kind of judgment that failed, a command's exit code, an agent's own verdict that is not
pass (its root cause, its words), and known patterns in what the attempt reported (collection and
import errors, timeouts, refused connections, assertion failures). What no rule recognises is
``Unknown``; a project may then ask its judge agent (see
``graphs.engine.classify``), whose answer ``graphs.domain.failure_judge.failure_answer_validate`` checks and caps.

Confidence is capped by what the evidence can show: a failed assertion says something about the product
but not for certain (at most 0.75); an environment, collection, command or report error says little
about the product (at most 0.6); only an all-pass result earns 1.0, and a failed attempt never is one.
A single run never proves a test flaky: ``FlakyTest`` needs evidence of several runs of the same test
(a rerun plugin's report), never one failure.

Pure functions over plain values: no Django, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from graphs.domain.mechanical_checks import FinalVerdict, final_verdict_read, verdict_reasons


class FailureCategory(StrEnum):
    PRODUCT_BUG = "ProductBug"
    TEST_BUG = "TestBug"
    ENV_FAILURE = "EnvFailure"
    CONTRACT_MISMATCH = "ContractMismatch"
    FLAKY_TEST = "FlakyTest"
    UNKNOWN = "Unknown"


CATEGORIES: tuple[str, ...] = tuple(category.value for category in FailureCategory)

# The caps of seed 003, by what kind of evidence a classification rests on (the third, 1.0 for an
# all-pass result, never applies to a failed attempt).
ASSERTION_CAP = 0.75
ERROR_CAP = 0.6
UNKNOWN_CONFIDENCE = 0.0

# What a classification keeps of the attempt's own words: a few short lines, never its whole output.
EVIDENCE_LINES_MAX = 5
EVIDENCE_LINE_MAX_CHARS = 300
# How much of an attempt's output the patterns read: the end, where test runners print their summary.
OUTPUT_TAIL_CHARS = 20_000
# The error codes a planning call records (graphs.planning.planner): its agent failed, or its answer is no usable
# manifest.
AGENT_FAILED = "agent_failed"
MANIFEST_UNUSABLE = "manifest_unusable"


@dataclass(frozen=True)
class FailureFacts:
    """What is known about a failed attempt, as plain values.

    ``agent_error_kind`` is the kind of ``AgentError`` that ended it (empty when none did); ``judgment``
    the failed judgment as stored (``Judgment.as_dict()``: ``kind``, ``issues``, and a command
    judgment's ``exit_code`` and ``timed_out``); ``error`` the attempt's error text and ``output`` what
    it produced.
    """

    error: str = ""
    # What failed, where the attempt recorded it: ``AGENT_FAILED`` or ``MANIFEST_UNUSABLE`` for a
    # planning call; empty for a node attempt, whose judgment and agent error say it.
    error_code: str = ""
    agent_error_kind: str = ""
    judgment: Mapping[str, Any] | None = None
    output: str = ""

    @property
    def judgment_kind(self) -> str:
        return str((self.judgment or {}).get("kind") or "")

    @property
    def exit_code(self) -> int | None:
        code = (self.judgment or {}).get("exit_code")
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    def text(self) -> str:
        """What the patterns read: the error, the judgment's issues, and the end of the output.

        Not the output an llm judge rejected: that is the node's own prose, whose words about timeouts
        or failing tests describe the product; the judge's issues say what is wrong with it.
        """
        issues = [str(issue) for issue in (self.judgment or {}).get("issues") or []]
        output = "" if self.judgment_kind == "llm" else self.output[-OUTPUT_TAIL_CHARS:]
        return "\n".join([self.error, *issues, output])

    def verdict(self) -> FinalVerdict | None:
        """The verdict the attempt's output gives, or None when it gives none, or when an llm judge
        rejected it (its verdict was then not what failed it)."""
        return None if self.judgment_kind == "llm" else final_verdict_read(self.output)


@dataclass(frozen=True)
class FailureClassification:
    category: str
    confidence: float
    evidence: list[str] = field(default_factory=list)
    # The rule that decided (a name of ``FAILURE_RULES``), or ``llm`` when the judge agent did.
    rule: str = ""
    # Why the judge agent's answer was not taken, or what it was asked with; empty otherwise.
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"category": self.category, "confidence": self.confidence, "evidence": self.evidence,
                "rule": self.rule, "note": self.note}

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any] | None) -> FailureClassification | None:
        """The classification stored on an attempt, or None for an attempt that has none."""
        if not stored or stored.get("category") not in CATEGORIES:
            return None
        return cls(category=stored["category"], confidence=float(stored.get("confidence") or 0.0),
                   evidence=[str(line) for line in stored.get("evidence") or []],
                   rule=str(stored.get("rule") or ""), note=str(stored.get("note") or ""))

    def is_unknown(self) -> bool:
        return self.category == FailureCategory.UNKNOWN


# --- the rules -------------------------------------------------------------------------------------------

# A matcher returns the evidence lines of a match, or None when its rule does not apply.
Matcher = Callable[[FailureFacts], list[str] | None]


@dataclass(frozen=True)
class FailureRule:
    name: str
    category: FailureCategory
    cap: float
    matches: Matcher


def _error_code(code: str, *agent_kinds: str) -> Matcher:
    def matches(facts: FailureFacts) -> list[str] | None:
        if facts.error_code != code or (agent_kinds and facts.agent_error_kind not in agent_kinds):
            return None
        return [f"error code: {code}" + (f" ({facts.agent_error_kind})" if facts.agent_error_kind else ""), facts.error]
    return matches


def _first(*matchers: Matcher) -> Matcher:
    def matches(facts: FailureFacts) -> list[str] | None:
        return next((found for matcher in matchers if (found := matcher(facts)) is not None), None)
    return matches


def _agent_error(*kinds: str) -> Matcher:
    def matches(facts: FailureFacts) -> list[str] | None:
        return [f"agent error kind: {facts.agent_error_kind}"] if facts.agent_error_kind in kinds else None
    return matches


def _judgment(*kinds: str) -> Matcher:
    def matches(facts: FailureFacts) -> list[str] | None:
        if facts.judgment_kind not in kinds:
            return None
        issues = [str(issue) for issue in (facts.judgment or {}).get("issues") or []]
        return [f"judgment kind: {facts.judgment_kind}", *issues[:2]]
    return matches


def _check(*check_refs: str) -> Matcher:
    def matches(facts: FailureFacts) -> list[str] | None:
        check_ref = (facts.judgment or {}).get("check_ref")
        if facts.judgment_kind != "mechanical" or check_ref not in check_refs:
            return None
        issues = [str(issue) for issue in (facts.judgment or {}).get("issues") or []]
        return [f"check: {check_ref}", *issues[:3]]
    return matches


def _exit_code(*codes: int) -> Matcher:
    def matches(facts: FailureFacts) -> list[str] | None:
        return [f"exit code: {facts.exit_code}"] if facts.exit_code in codes else None
    return matches


def _command_timed_out(facts: FailureFacts) -> list[str] | None:
    return ["the command timed out"] if (facts.judgment or {}).get("timed_out") is True else None


def _verdict(*root_causes: str | None, verdicts: tuple[str, ...] = ("FAIL", "INCONCLUSIVE")) -> Matcher:
    """The output's own verdict, when it is one of ``verdicts`` and names one of ``root_causes`` (None: it
    names none); its evidence is the verdict's own words."""
    def matches(facts: FailureFacts) -> list[str] | None:
        read = facts.verdict()
        if read is None or read.verdict not in verdicts or read.root_cause not in root_causes:
            return None
        detail = f" — {read.root_cause_detail}" if read.root_cause_detail else ""
        cause = [f"root cause: {read.root_cause}{detail}"] if read.root_cause else []
        return [f"verdict: {read.line}", *cause, *verdict_reasons(facts.output)]
    return matches


def _pattern(regex: str) -> Matcher:
    compiled = re.compile(regex, re.IGNORECASE | re.MULTILINE)

    def matches(facts: FailureFacts) -> list[str] | None:
        found = compiled.search(facts.text())
        return [f"matched: {_line_around(found.string, found.start())}"] if found else None
    return matches


def _line_around(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start:end if end != -1 else len(text)].strip()


FAILURE_RULES: tuple[FailureRule, ...] = (
    # A planning call records what failed as its error code.
    FailureRule("planning_agent_unreachable", FailureCategory.ENV_FAILURE, ERROR_CAP,
                _error_code(AGENT_FAILED, "timeout", "network", "rate_limit", "unavailable", "quota", "auth",
                            "not_found", "max_turns", "budget", "sandbox")),
    FailureRule("manifest_unusable", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _first(_error_code(MANIFEST_UNUSABLE), _error_code(AGENT_FAILED, "invalid_output"))),
    # What the agent call itself reported: the environment failed the node, not its work.
    FailureRule("agent_unreachable", FailureCategory.ENV_FAILURE, ERROR_CAP,
                _agent_error("timeout", "network", "rate_limit", "unavailable", "quota", "auth", "not_found")),
    FailureRule("agent_limits", FailureCategory.ENV_FAILURE, ERROR_CAP, _agent_error("max_turns", "budget")),
    FailureRule("sandbox_unavailable", FailureCategory.ENV_FAILURE, ERROR_CAP, _agent_error("sandbox")),
    FailureRule("agent_invalid_output", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _agent_error("invalid_output", "bad_request")),
    # Judgments that fail on the node's contract, not on the product.
    FailureRule("commands_disabled", FailureCategory.ENV_FAILURE, ERROR_CAP, _judgment("commands_disabled")),
    # An external executor that never reported: the work may be fine, its runner is not.
    FailureRule("external_no_report", FailureCategory.ENV_FAILURE, ERROR_CAP, _judgment("external_timeout")),
    FailureRule("write_set_violated", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP, _judgment("write_set")),
    # An agent that rewrote its worktree's .git broke the rules every attempt runs by.
    FailureRule("workspace_tampered", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP, _judgment("workspace_tampered")),
    FailureRule("merge_conflict", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP, _judgment("merge_conflict")),
    FailureRule("case_manifest_invalid", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _check("test_case_manifest_valid")),
    FailureRule("command_timed_out", FailureCategory.ENV_FAILURE, ERROR_CAP, _command_timed_out),
    FailureRule("command_not_runnable", FailureCategory.ENV_FAILURE, ERROR_CAP, _exit_code(126, 127)),
    FailureRule("command_killed", FailureCategory.ENV_FAILURE, ERROR_CAP, _exit_code(-9, 137, -15, 143)),
    # pytest's own exit codes: 4 is a usage error, 5 collected no tests (the wrong test root or mode).
    FailureRule("pytest_usage_error", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP, _exit_code(4)),
    # An agent's verdict that is not pass says why in its own words, before any pattern reads them: its
    # named root cause decides; a fail that names none blames the work, with less confidence. An
    # inconclusive verdict naming none says no cause, but its words are still the evidence.
    FailureRule("verdict_blames_code", FailureCategory.PRODUCT_BUG, ASSERTION_CAP, _verdict("coder")),
    FailureRule("verdict_blames_plan", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _verdict("planning", "skill_defect")),
    FailureRule("verdict_fails", FailureCategory.PRODUCT_BUG, ERROR_CAP, _verdict(None, verdicts=("FAIL",))),
    FailureRule("verdict_inconclusive", FailureCategory.UNKNOWN, UNKNOWN_CONFIDENCE,
                _verdict(None, verdicts=("INCONCLUSIVE",))),
    FailureRule("no_tests_collected", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _pattern(r"\bno tests ran\b|\bcollected 0 items\b|\bno tests collected\b")),
    # Collection errors come before assertions: a suite that did not collect says nothing of the product.
    FailureRule("collection_error", FailureCategory.TEST_BUG, ERROR_CAP,
                _pattern(r"\bERROR collecting\b|\berrors? during collection\b|\bcollection[- ]error\b")),
    FailureRule("fixture_missing", FailureCategory.TEST_BUG, ERROR_CAP, _pattern(r"\bfixture '[^']+' not found")),
    FailureRule("script_does_not_compile", FailureCategory.TEST_BUG, ERROR_CAP,
                _pattern(r"\bdoes not compile\b|^\s*SyntaxError\b|\bIndentationError\b")),
    FailureRule("import_error", FailureCategory.ENV_FAILURE, ERROR_CAP,
                _pattern(r"\bModuleNotFoundError\b|\bImportError\b|\bNo module named\b")),
    FailureRule("connection_refused", FailureCategory.ENV_FAILURE, ERROR_CAP,
                _pattern(r"\bconnection refused\b|\bECONNREFUSED\b|\bName or service not known\b"
                         r"|\bTemporary failure in name resolution\b|\bCould not resolve host\b")),
    FailureRule("timeout", FailureCategory.ENV_FAILURE, ERROR_CAP,
                _pattern(r"\btimed out\b|\bTimeoutError\b|\bTimeoutExpired\b|\bdeadline exceeded\b")),
    FailureRule("tooling_missing", FailureCategory.ENV_FAILURE, ERROR_CAP,
                _pattern(r"\bcommand not found\b|\bPermission denied\b|\bNo space left on device\b")),
    FailureRule("infrastructure_lost", FailureCategory.ENV_FAILURE, ERROR_CAP,
                _pattern(r"^database connection lost\b|\bworkspace error\b|\binternal error\b|\bno heartbeat\b")),
    # Several runs of the same test that disagree: the only evidence that makes a test flaky.
    FailureRule("rerun_disagrees", FailureCategory.FLAKY_TEST, ERROR_CAP,
                _pattern(r"::\S+ RERUN\b|\b\d+ rerun\b")),
    FailureRule("assertion_failed", FailureCategory.PRODUCT_BUG, ASSERTION_CAP,
                _pattern(r"\bAssertionError\b|^E\s+assert\b|^FAILED \S+::|\b\d+ failed\b")),
    FailureRule("output_off_contract", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _pattern(r"has no 'VERDICT:' line|has no line that starts with 'VERDICT:'|held no \{ok, issues\} JSON"
                         r"|is not a valid test case manifest")),
)


def failure_classify(facts: FailureFacts) -> FailureClassification:
    """Classify a failed attempt by the first rule of ``FAILURE_RULES`` that matches it; ``Unknown``
    when none does."""
    for rule in FAILURE_RULES:
        evidence = rule.matches(facts)
        if evidence is not None:
            if facts.exit_code is not None and not any(line.startswith("exit code") for line in evidence):
                evidence.append(f"exit code: {facts.exit_code}")
            return FailureClassification(category=rule.category, confidence=rule.cap,
                                         evidence=evidence_bounded(evidence), rule=rule.name)
    return FailureClassification(category=FailureCategory.UNKNOWN, confidence=UNKNOWN_CONFIDENCE,
                                 evidence=evidence_bounded([f"error: {facts.error}"] if facts.error else []),
                                 rule="no_rule_matched")


def confidence_cap(category: str) -> float:
    """The most confidence a classification of a failed attempt in ``category`` may claim: a product bug
    rests on assertions at best; every other category on an error, or on nothing."""
    return ASSERTION_CAP if category == FailureCategory.PRODUCT_BUG else ERROR_CAP


def evidence_bounded(lines: Iterable[str]) -> list[str]:
    kept = []
    for line in lines:
        line = " ".join(str(line).split())
        if line:
            kept.append(line if len(line) <= EVIDENCE_LINE_MAX_CHARS else line[: EVIDENCE_LINE_MAX_CHARS - 1] + "…")
    return kept[:EVIDENCE_LINES_MAX]

