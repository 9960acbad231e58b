"""The test-case manifest (Backend Test Case Manifest v1) is a recognised artifact: validated field by
field, and the task page shows which acceptance criteria have a passing case."""

from __future__ import annotations

import copy
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.domain.case_manifests import (
    acceptance_criteria_with_ids,
    case_manifest_errors,
    coverage_summary,
    criteria_coverage,
)
from graphs.domain.catalogs import ARTIFACT_TYPES, artifact_entry
from graphs.domain.check_registry import check_run
from graphs.domain.manifest import validate_graph_manifest
from graphs.engine import run_start
from graphs.models import Artifact
from tests import factories
from tests.clients import signed_in
from tests.run_builders import latest, node, planned_run

VALID = {
    "schemaVersion": 1,
    "sourceBinding": {
        "taskId": "export-csv", "requirementPath": "docs/prd.md", "requirementSha256": "a" * 64,
        "referencePaths": ["docs/sdd.md"], "requirementIds": ["AC-1", "AC-2", "AC-3"],
    },
    "cases": [
        {"caseId": "BE-EXPORT-001", "acIds": ["AC-1"], "title": "CSV has a header", "category": "positive",
         "automationStatus": "generated", "file": "tests/test_export.py", "symbol": "test_be_export_001"},
        {"caseId": "BE-EXPORT-002", "acIds": ["AC-2"], "title": "Empty report", "category": "boundary",
         "automationStatus": "planned"},
        {"caseId": "BE-EXPORT-003", "acIds": ["AC-3"], "title": "Huge report", "category": "timeout",
         "automationStatus": "skipped", "gapReason": "needs a 2 GB fixture"},
    ],
    "evidenceGaps": [{"acId": "AC-3", "description": "no fixture large enough"}],
}


def broken(change) -> dict:
    manifest = copy.deepcopy(VALID)
    change(manifest)
    return manifest


def test_a_valid_manifest_has_no_errors_and_its_coverage_is_worked_out():
    assert case_manifest_errors(VALID) == []
    assert coverage_summary(VALID) == {
        "explicitAcCount": 3, "coveredAcCount": 2, "gappedAcCount": 1, "caseCount": 3, "generatedCount": 1,
        "plannedCount": 1, "skippedCount": 1, "unsupportedCount": 0, "acCoverageRatio": 0.6667,
    }


@pytest.mark.parametrize(("change", "errors"), [
    pytest.param(lambda m: m.update(schemaVersion=2), ["schemaVersion: 1 was expected"], id="version"),
    pytest.param(lambda m: m.pop("evidenceGaps"), ["evidenceGaps: is required"], id="missing-top-level"),
    pytest.param(lambda m: m.update(notes="x"), ["notes: is not a field of this manifest"], id="unknown-field"),
    pytest.param(lambda m: m["sourceBinding"].update(requirementSha256="abc"),
                 ["sourceBinding.requirementSha256: 'abc' does not match '^[a-f0-9]{64}$'"], id="sha"),
    pytest.param(lambda m: m["cases"][0].pop("symbol"),
                 ["cases[0].symbol: is required when automationStatus is generated"], id="generated-needs-symbol"),
    pytest.param(lambda m: m["cases"][2].pop("gapReason"),
                 ["cases[2].gapReason: is required when automationStatus is skipped"], id="skipped-needs-reason"),
    pytest.param(lambda m: m["evidenceGaps"][0].pop("acId"), ["evidenceGaps[0]: needs acId or caseId"],
                 id="gap-needs-an-id"),
    pytest.param(lambda m: m["cases"][1].update(acIds=[]), ["cases[1].acIds: [] should be non-empty"], id="no-acs"),
    pytest.param(lambda m: m["cases"][1].update(caseId="BE-EXPORT-001"),
                 ["cases[1].caseId: BE-EXPORT-001 is already used by an earlier case"], id="duplicate-case"),
    pytest.param(lambda m: m.update(coverageSummary={**coverage_summary(m), "acCoverageRatio": 1.0}),
                 ["coverageSummary.acCoverageRatio: 1.0 but the cases give 0.6667"], id="invented-ratio"),
])
def test_each_offending_field_is_named(change, errors):
    assert case_manifest_errors(broken(change)) == errors


def test_every_offending_field_is_named_at_once():
    def many(m):
        m["cases"][0].update(caseId="BE-1", category="happy")
        m["cases"][0].pop("file")
    assert case_manifest_errors(broken(many)) == [
        "cases[0].caseId: 'BE-1' does not match '^BE-[A-Z0-9]+(?:-[A-Z0-9]+)*-\\\\d{3}$'",
        "cases[0].category: 'happy' is not one of ['positive', 'negative', 'boundary', 'state-transition', "
        "'auth', 'timeout', 'concurrency', 'other']",
        "cases[0].file: is required when automationStatus is generated",
    ]


def test_the_mechanical_check_reads_the_manifest_out_of_free_text():
    assert check_run("test_case_manifest_valid", "Here it is:\n```json\n" + json.dumps(VALID) + "\n```").ok
    refused = check_run("test_case_manifest_valid", "I wrote the cases down.")
    assert not refused.ok and "no JSON object with a schemaVersion" in refused.issues[0]


def test_it_is_an_artifact_type_planners_may_use():
    assert "test_case_manifest" in ARTIFACT_TYPES
    assert artifact_entry("test_case_manifest") is not None
    validate_graph_manifest({"nodes": [{"node_id": "cases", "artifact_type": "test_case_manifest"}], "edges": []})


def test_acceptance_criteria_get_positional_ids_unless_they_carry_their_own():
    criteria = acceptance_criteria_with_ids(["The CSV opens", "AC-EXPORT-9: it has a header", "It is fast"])
    assert [(item.ac_id, item.text) for item in criteria] == [
        ("AC-1", "The CSV opens"), ("AC-EXPORT-9", "it has a header"), ("AC-3", "It is fast")]


def test_a_criterion_has_a_passing_case_only_when_a_generated_case_ran_in_a_run_that_succeeded():
    criteria = acceptance_criteria_with_ids(["header", "empty", "huge", "unmentioned"])
    states = [item.state for item in criteria_coverage(criteria, VALID, run_succeeded=True)]
    assert states == ["passing", "planned", "gap", "no_case"]
    assert criteria_coverage(criteria, VALID, run_succeeded=False)[0].state == "generated"


# --- in a run, and on the task page -----------------------------------------------------------------------

CASES_NODE = node("cases", promotes_to_artifact={"artifact_type": "test_case_manifest"})


@pytest.mark.django_db
def test_a_node_producing_a_manifest_fails_on_every_offending_field(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "cases")] = json.dumps(broken(lambda m: m["cases"][0].pop("file")))
    run = planned_run(task, {"nodes": [CASES_NODE], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    failed = latest(run)["cases"]
    assert failed.status == "failed"
    assert failed.judgment_result["check_ref"] == "test_case_manifest_valid"
    assert failed.judgment_result["issues"] == ["cases[0].file: is required when automationStatus is generated"]
    assert (failed.failure["category"], failed.failure["rule"]) == ("ContractMismatch", "case_manifest_invalid")
    assert not Artifact.objects.filter(run=run).exists()


@pytest.mark.django_db
def test_a_valid_manifest_is_promoted_and_the_task_page_shows_which_criteria_pass(task, alice, scripted_runner,
                                                                                 inline_executor):
    task.acceptance_criteria = ["The CSV has a header", "An empty report exports", "A huge report exports"]
    task.save()
    scripted_runner.replies[("node", "cases")] = "The cases:\n```json\n" + json.dumps(VALID) + "\n```"
    run = planned_run(task, {"nodes": [CASES_NODE], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    assert Artifact.objects.get(run=run).artifact_type == "test_case_manifest"

    html = signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()

    assert '<li data-ac-id="AC-1" data-coverage-state="passing"><code>AC-1</code> The CSV has a header' in html
    assert 'passing case: BE-EXPORT-001' in html
    assert 'data-ac-id="AC-2" data-coverage-state="planned"' in html
    assert 'data-ac-id="AC-3" data-coverage-state="gap"' in html


@pytest.mark.django_db
def test_without_a_manifest_the_criteria_show_their_ids_and_say_so(task, alice):
    html = signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()
    assert '<li data-ac-id="AC-1"><code>AC-1</code> The CSV opens in a spreadsheet</li>' in html
    assert "No test case manifest yet" in html


@pytest.mark.django_db
def test_the_coverage_takes_no_query_of_its_own(project, alice):
    counts = []
    for with_manifest in (False, True):
        task = factories.TaskFactory(project=project)
        run = planned_run(task, {"nodes": [CASES_NODE], "edges": []}, status="succeeded")
        if with_manifest:
            execution = run.executions.create(node_id="cases", subagent_type="planner", status="succeeded")
            Artifact.objects.create(task=task, run=run, node_exec=execution, artifact_type="test_case_manifest",
                                    content=json.dumps(VALID))
            Artifact.objects.create(task=task, run=run, node_exec=execution, artifact_type="brd", content="BRD")
        with CaptureQueriesContext(connection) as queries:
            html = signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()
        assert ("data-coverage-state" in html) is with_manifest
        counts.append(len(queries))
    assert counts[0] == counts[1]
