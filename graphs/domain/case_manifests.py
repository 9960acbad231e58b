"""The test-case manifest (Backend Test Case Manifest v1): which cases cover which acceptance criteria,
and how far each case is automated — validated as a JSON Schema, with every offending field named.

A manifest binds to its task (``sourceBinding``), lists cases (``BE-…-NNN`` ids, each covering one or
more ``AC-…`` ids, with an ``automationStatus`` of planned, generated, skipped or unsupported) and the
evidence gaps it admits. A generated case names its test (``file`` and ``symbol``); a skipped or
unsupported one says why (``gapReason``); an evidence gap names an ``acId`` or a ``caseId``. Coverage
figures are worked out from the cases, never taken on an agent's word: a ``coverageSummary`` that
disagrees with them is an error.

Acceptance criteria are ids ``AC-1``, ``AC-2``, … by their position in the task, unless an item starts
with an id of its own (``AC-EXPORT-1: the CSV opens``).

Pure functions over plain values: no Django, no I/O. ``test_case_manifest_valid`` is the mechanical check
graphs.domain.check_registry names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from graphs.domain.json_extraction import extract_json_payload
from graphs.domain.mechanical_checks import CheckResult

TEST_CASE_MANIFEST = "test_case_manifest"

_AC_ID = r"AC-[A-Z0-9]+(?:-[A-Z0-9]+)*"
_CASE_ID = r"BE-[A-Z0-9]+(?:-[A-Z0-9]+)*-\d{3}"
_TEXT = {"type": "string", "minLength": 1}

TEST_CASE_MANIFEST_SCHEMA: Mapping[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Backend Test Case Manifest v1",
    "type": "object",
    "additionalProperties": False,
    "required": ["schemaVersion", "sourceBinding", "cases", "evidenceGaps"],
    "properties": {
        "schemaVersion": {"const": 1},
        "sourceBinding": {
            "type": "object",
            "additionalProperties": False,
            "required": ["taskId", "requirementPath", "requirementSha256", "referencePaths", "requirementIds"],
            "properties": {
                "taskId": _TEXT,
                "requirementPath": _TEXT,
                "requirementSha256": {"type": "string", "pattern": "^[a-f0-9]{64}$"},
                "referencePaths": {"type": "array", "items": _TEXT},
                "requirementIds": {
                    "type": "array",
                    "items": {"type": "string", "pattern": r"^(?:REQ|BR|AC)-[A-Z0-9]+(?:-[A-Z0-9]+)*$"},
                },
            },
        },
        "cases": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["caseId", "acIds", "title", "category", "automationStatus"],
                "properties": {
                    "caseId": {"type": "string", "pattern": f"^{_CASE_ID}$"},
                    "acIds": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": f"^{_AC_ID}$"}},
                    "title": _TEXT,
                    "category": {"enum": ["positive", "negative", "boundary", "state-transition", "auth", "timeout",
                                          "concurrency", "other"]},
                    "automationStatus": {"enum": ["planned", "generated", "skipped", "unsupported"]},
                    "endpointRef": _TEXT,
                    "ruleRefs": {"type": "array", "items": _TEXT},
                    "file": _TEXT,
                    "symbol": _TEXT,
                    "gapReason": _TEXT,
                    "evidenceRef": _TEXT,
                },
                "allOf": [
                    {"if": {"properties": {"automationStatus": {"const": "generated"}},
                            "required": ["automationStatus"]},
                     "then": {"required": ["file", "symbol"]}},
                    {"if": {"properties": {"automationStatus": {"enum": ["skipped", "unsupported"]}},
                            "required": ["automationStatus"]},
                     "then": {"required": ["gapReason"]}},
                ],
            },
        },
        "evidenceGaps": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["description"],
                "properties": {
                    "acId": {"type": "string", "pattern": f"^{_AC_ID}$"},
                    "caseId": {"type": "string", "pattern": f"^{_CASE_ID}$"},
                    "description": _TEXT,
                    "evidenceRef": _TEXT,
                },
                "anyOf": [{"required": ["acId"]}, {"required": ["caseId"]}],
            },
        },
        "coverageSummary": {
            "type": "object",
            "additionalProperties": False,
            "required": ["explicitAcCount", "coveredAcCount", "gappedAcCount", "caseCount", "generatedCount",
                         "plannedCount", "skippedCount", "unsupportedCount", "acCoverageRatio"],
            "properties": {
                **{name: {"type": "integer", "minimum": 0} for name in (
                    "explicitAcCount", "coveredAcCount", "gappedAcCount", "caseCount", "generatedCount",
                    "plannedCount", "skippedCount", "unsupportedCount")},
                "acCoverageRatio": {"type": "number", "minimum": 0, "maximum": 1},
            },
        },
    },
}

_VALIDATOR = Draft202012Validator(TEST_CASE_MANIFEST_SCHEMA)


def case_manifest_in(text: str) -> dict[str, Any] | None:
    """The manifest in an agent's free-text answer: the first JSON object with a ``schemaVersion``."""
    return extract_json_payload(text, required_keys=("schemaVersion",))


def case_manifest_errors(manifest: Any) -> list[str]:
    """Every way ``manifest`` breaks Backend Test Case Manifest v1, each naming its field
    (``cases[2].file: …``); empty when it is valid."""
    errors = [message for error in _VALIDATOR.iter_errors(manifest) for message in _messages(error)]
    if not errors and isinstance(manifest, dict):
        errors = _duplicate_case_ids(manifest["cases"]) + _coverage_disagreements(manifest)
    return list(dict.fromkeys(errors))


def test_case_manifest_valid(content: str) -> CheckResult:
    """The mechanical check of a node that produces a manifest: the output holds a valid one, and every
    offending field is an issue. Kept here, beside the schema it applies."""
    manifest = case_manifest_in(content)
    if manifest is None:
        return CheckResult(ok=False, issues=["the output is not a valid test case manifest: no JSON object with a "
                                             "schemaVersion"])
    errors = case_manifest_errors(manifest)
    return CheckResult(ok=not errors, issues=errors)


def _messages(error: ValidationError) -> list[str]:
    """One message per offending field: a missing or unexpected property is named in the path."""
    path = _path(error.absolute_path)
    instance = error.instance if isinstance(error.instance, dict) else {}
    if error.validator == "required":
        return [f"{_join(path, name)}: is required{_condition(error)}" for name in error.validator_value
                if name not in instance]
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        return [f"{_join(path, name)}: is not a field of this manifest" for name in instance if name not in known]
    if error.validator == "anyOf" and all("required" in option for option in error.validator_value):
        names = " or ".join(name for option in error.validator_value for name in option["required"])
        return [f"{path or '(manifest)'}: needs {names}"]
    return [f"{path or '(manifest)'}: {error.message}"]


def _condition(error: ValidationError) -> str:
    """Why a conditional field is required (`` when automationStatus is generated``): its ``then``."""
    if "then" not in error.schema_path or not isinstance(error.instance, dict):
        return ""
    status = error.instance.get("automationStatus")
    return f" when automationStatus is {status}" if status else ""


def _path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _duplicate_case_ids(cases: Sequence[Mapping[str, Any]]) -> list[str]:
    seen: set[str] = set()
    errors = []
    for index, case in enumerate(cases):
        if case["caseId"] in seen:
            errors.append(f"cases[{index}].caseId: {case['caseId']} is already used by an earlier case")
        seen.add(case["caseId"])
    return errors


def coverage_summary(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The coverage figures of a valid manifest, worked out from its cases: an explicit AC is one the
    source binding lists (or, when it lists none, one a case names); it is covered when a planned or
    generated case names it, gapped when an evidence gap names it or only skipped/unsupported cases do."""
    cases = manifest["cases"]
    bound = [ac for ac in manifest["sourceBinding"]["requirementIds"] if ac.startswith("AC-")]
    explicit = set(bound) or {ac for case in cases for ac in case["acIds"]}
    covered = {ac for case in cases if case["automationStatus"] in ("planned", "generated") for ac in case["acIds"]}
    named = {ac for case in cases for ac in case["acIds"]}
    gapped = {gap["acId"] for gap in manifest["evidenceGaps"] if "acId" in gap} | (named - covered)
    counts = {status: sum(case["automationStatus"] == status for case in cases)
              for status in ("generated", "planned", "skipped", "unsupported")}
    return {
        "explicitAcCount": len(explicit), "coveredAcCount": len(explicit & covered),
        "gappedAcCount": len(explicit & gapped), "caseCount": len(cases),
        "generatedCount": counts["generated"], "plannedCount": counts["planned"],
        "skippedCount": counts["skipped"], "unsupportedCount": counts["unsupported"],
        "acCoverageRatio": round(len(explicit & covered) / len(explicit), 4) if explicit else 1.0,
    }


def _coverage_disagreements(manifest: Mapping[str, Any]) -> list[str]:
    stated = manifest.get("coverageSummary")
    if stated is None:
        return []
    worked_out = coverage_summary(manifest)
    return [f"coverageSummary.{name}: {stated[name]} but the cases give {value}"
            for name, value in worked_out.items() if stated[name] != value]


# --- acceptance criteria ----------------------------------------------------------------------------------

# An item's own id ends with a colon, a full stop, a bracket or a dash (hyphen, en or em dash).
_OWN_ID = re.compile(rf"^\s*({_AC_ID})\s*[:.)\-\u2013\u2014]\s*(.*)$", re.DOTALL)


@dataclass(frozen=True)
class Criterion:
    ac_id: str
    text: str


def acceptance_criteria_with_ids(criteria: Sequence[Any]) -> list[Criterion]:
    """The task's acceptance criteria with their ids: ``AC-<position>`` from 1, or the id an item
    starts with (``AC-EXPORT-1: …``)."""
    found = []
    for position, item in enumerate(criteria, start=1):
        text = str(item)
        own = _OWN_ID.match(text)
        found.append(Criterion(own.group(1), own.group(2).strip()) if own else Criterion(f"AC-{position}", text))
    return found


# How far a criterion is covered by the latest accepted manifest, best first.
PASSING = "passing"
GENERATED = "generated"
PLANNED = "planned"
GAP = "gap"
NO_CASE = "no_case"


_COVERAGE_LABELS = {
    PASSING: "passing case", GENERATED: "case generated; its run has not passed", PLANNED: "case planned",
    GAP: "gap", NO_CASE: "no case",
}


@dataclass(frozen=True)
class CriterionCoverage:
    criterion: Criterion
    state: str
    case_ids: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return _COVERAGE_LABELS[self.state]


def criteria_coverage(
    criteria: Sequence[Criterion], manifest: Mapping[str, Any] | None, *, run_succeeded: bool
) -> list[CriterionCoverage]:
    """Which criteria have a passing case: a generated case names it and the run that produced the
    manifest succeeded (its tests ran and its verdict passed). Short of that: ``generated`` (the run did
    not succeed), ``planned``, ``gap`` (only skipped or unsupported cases, or an evidence gap), ``no_case``."""
    cases = (manifest or {}).get("cases") or []
    gaps = {gap.get("acId") for gap in (manifest or {}).get("evidenceGaps") or []}
    coverage = []
    for criterion in criteria:
        naming = [case for case in cases if criterion.ac_id in case.get("acIds", [])]
        statuses = {case.get("automationStatus") for case in naming}
        if "generated" in statuses:
            state = PASSING if run_succeeded else GENERATED
        elif "planned" in statuses:
            state = PLANNED
        elif naming or criterion.ac_id in gaps:
            state = GAP
        else:
            state = NO_CASE
        coverage.append(CriterionCoverage(criterion, state, tuple(case.get("caseId", "") for case in naming)))
    return coverage
