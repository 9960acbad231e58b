"""Classifying a failed attempt: a category, the evidence for it, and a capped confidence.

Deterministic rules come first (``FAILURE_RULES``, tried in order, the first match wins): the kind of
agent error, the kind of judgment that failed, a command's exit code, and known patterns in what the
attempt reported (collection and import errors, timeouts, refused connections, assertion failures).
What no rule recognises is ``Unknown``; a project may then ask its judge agent (see
``graphs.engine.classify``), whose answer ``failure_answer_validate`` checks and caps here.

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

# What a classification keeps of the attempt's own words: a few short lines, never its whole output.
EVIDENCE_LINES_MAX = 5
EVIDENCE_LINE_MAX_CHARS = 300
# How much of an attempt's output the patterns read: the end, where test runners print their summary.
OUTPUT_TAIL_CHARS = 20_000
# The error codes a planning call records (graphs.planning): its agent failed, or its answer is no usable
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
    # A final verdict's named root cause: the coder's work, or the plan it was built from.
    FailureRule("verdict_blames_code", FailureCategory.PRODUCT_BUG, ASSERTION_CAP,
                _pattern(r"^\W*(?:ROOT_CAUSE|root_cause_category)\W*\s*coder\b")),
    FailureRule("verdict_blames_plan", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _pattern(r"^\W*(?:ROOT_CAUSE|root_cause_category)\W*\s*(planning|skill_defect)\b")),
    FailureRule("output_off_contract", FailureCategory.CONTRACT_MISMATCH, ERROR_CAP,
                _pattern(r"has no 'VERDICT:' line|has no line that starts with 'VERDICT:'|held no \{ok, issues\} JSON"
                         r"|is not a valid test case manifest")),
)

UNKNOWN_CONFIDENCE = 0.0


def failure_classify(facts: FailureFacts) -> FailureClassification:
    """Classify a failed attempt by the first rule of ``FAILURE_RULES`` that matches it; ``Unknown``
    when none does."""
    for rule in FAILURE_RULES:
        evidence = rule.matches(facts)
        if evidence is not None:
            if facts.exit_code is not None and not any(line.startswith("exit code") for line in evidence):
                evidence.append(f"exit code: {facts.exit_code}")
            return FailureClassification(category=rule.category, confidence=rule.cap,
                                         evidence=_evidence_bounded(evidence), rule=rule.name)
    return FailureClassification(category=FailureCategory.UNKNOWN, confidence=UNKNOWN_CONFIDENCE,
                                 evidence=_evidence_bounded([f"error: {facts.error}"] if facts.error else []),
                                 rule="no_rule_matched")


def confidence_cap(category: str) -> float:
    """The most confidence a classification of a failed attempt in ``category`` may claim: a product bug
    rests on assertions at best; every other category on an error, or on nothing."""
    return ASSERTION_CAP if category == FailureCategory.PRODUCT_BUG else ERROR_CAP


def _evidence_bounded(lines: Iterable[str]) -> list[str]:
    kept = []
    for line in lines:
        line = " ".join(str(line).split())
        if line:
            kept.append(line if len(line) <= EVIDENCE_LINE_MAX_CHARS else line[: EVIDENCE_LINE_MAX_CHARS - 1] + "…")
    return kept[:EVIDENCE_LINES_MAX]


# --- the judge agent's answer ------------------------------------------------------------------------------

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
    return FailureClassification(category=category, confidence=capped, evidence=_evidence_bounded(evidence),
                                 rule="llm")


def _unknown_because(reason: str) -> FailureClassification:
    return FailureClassification(category=FailureCategory.UNKNOWN, confidence=UNKNOWN_CONFIDENCE, rule="llm",
                                 note=f"fell back to Unknown: {reason}")


# --- root causes -------------------------------------------------------------------------------------------

ROOT_CAUSE = "root_cause"
FAILED_DOWNSTREAM = "failed_downstream"
BLOCKED = "blocked"


@dataclass(frozen=True)
class FailureRole:
    """Where a failed or blocked node stands in its run's failure: a ``root_cause`` (no failed node
    upstream of it), ``failed_downstream`` of one, or ``blocked``; ``because_of`` names the root
    causes upstream of it (empty for a root cause, and for a node blocked by something else, such as
    a cancelled upstream or an internal error)."""

    role: str
    because_of: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "because_of": list(self.because_of)}

    def label(self) -> str:
        """How pages name the role (the DAG's ``failureRoleLabel`` says the same): ``root cause``,
        ``blocked by a, b +1``, ``failed after a``."""
        if self.role == ROOT_CAUSE:
            return "root cause"
        names = ", ".join(self.because_of[:2]) + (f" +{len(self.because_of) - 2}" if len(self.because_of) > 2 else "")
        if self.role == BLOCKED:
            return f"blocked by {names}" if names else "blocked"
        return f"failed after {names}" if names else "failed downstream"


def failure_roles(
    *, dependencies: Mapping[str, Iterable[str]], statuses: Mapping[str, str]
) -> dict[str, FailureRole]:
    """The role of every failed or blocked node of a run, by its node's latest status.

    ``dependencies`` maps each node to the nodes it depends on (data dependencies, never ``on_failure``
    edges); ``statuses`` each node to its latest attempt's status. A failed node is a root cause unless
    a node upstream of it failed too; the root causes a node is downstream of are the failed nodes
    upstream of it that are root causes themselves.
    """
    # Only failed and blocked nodes have a role, so only their upstream is walked: a large run that
    # is going well costs nothing here.
    ancestors = _ancestors(dependencies, of=[node_id for node_id, status in statuses.items()
                                            if status in ("failed", "blocked")])
    failed = {node_id for node_id, status in statuses.items() if status == "failed"}
    roots = {node_id for node_id in failed if not ancestors.get(node_id, set()) & failed}
    roles: dict[str, FailureRole] = {}
    for node_id, status in statuses.items():
        if status not in ("failed", "blocked"):
            continue
        upstream_roots = tuple(sorted(ancestors.get(node_id, set()) & roots))
        if node_id in roots:
            roles[node_id] = FailureRole(ROOT_CAUSE)
        elif status == "failed":
            roles[node_id] = FailureRole(FAILED_DOWNSTREAM, upstream_roots)
        else:
            roles[node_id] = FailureRole(BLOCKED, upstream_roots)
    return roles


def _ancestors(dependencies: Mapping[str, Iterable[str]], *, of: Iterable[str]) -> dict[str, set[str]]:
    """The transitive upstream of each node in ``of``; a dependency cycle (which validation refuses)
    cannot loop."""
    found: dict[str, set[str]] = {}
    for start in of:
        seen: set[str] = set()
        stack = list(dependencies.get(start, ()))
        while stack:
            current = stack.pop()
            if current in seen or current == start:
                continue
            seen.add(current)
            stack.extend(found.get(current, dependencies.get(current, ())))
        found[start] = seen
    return found
