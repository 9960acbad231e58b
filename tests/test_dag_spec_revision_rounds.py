"""A verdict gate with a revision round sends a rejected review back to the task it names, reruns
everything in between, and gives up once its rounds are used."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from graphs.models import WorkGraphRun
from graphs.planning.dag_specs import dag_spec_import
from tests.dag_specs import gate, pi, spec_of

pytestmark = pytest.mark.django_db

REJECTED = "**VERDICT: request-revision**\nCritical: BE-ORDER-002 has no expected result."
PASSED = "Review done.\nVERDICT: pass\nNo findings."


def _run(project, alice, *, rounds: int) -> WorkGraphRun:
    spec = spec_of(
        pi("cases", toolProfile="write", writeSet=["testcase/md/**"]),
        pi("review", "cases", role="reviewer"),
        gate("review-gate", "review", revision={"loopBackTo": "cases", "maxRounds": rounds}),
        pi("automate", "review-gate"),
    )
    run = dag_spec_import(project=project, spec=spec, imported_by=alice)
    run_start(run=run)
    return run


def _attempts(run: WorkGraphRun) -> list[tuple[str, int, str, str]]:
    return list(run.executions.order_by("created_at", "node_id").values_list("node_id", "attempt", "cause", "status"))


def test_a_rejected_review_reruns_its_revision_round_and_passes_the_gate(project, alice, scripted_runner,
                                                                        inline_executor):
    scripted_runner.replies[("node", "review", 1)] = REJECTED
    scripted_runner.replies[("node", "review", 2)] = PASSED
    run = _run(project, alice, rounds=1)
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "succeeded"
    assert scripted_runner.node_calls() == [("cases", 1), ("review", 1), ("cases", 2), ("review", 2), ("automate", 1)]
    gate_rows = run.executions.filter(node_id="review-gate").order_by("attempt")
    assert [(row.cause, row.status) for row in gate_rows] == [("initial", "failed"), ("loop_back", "succeeded")]
    assert "request-revision" in gate_rows[0].judgment_result["issues"][0]
    # The rerun of the revised task is told why its work came back.
    rerun = run.executions.get(node_id="cases", attempt=2)
    assert "request-revision" in rerun.input_payload["feedback"][0]
    assert any("BE-ORDER-002 has no expected result." in line for line in rerun.input_payload["feedback"]), (
        "the revision round is told the audit's findings, not only that it did not pass"
    )


def test_once_its_rounds_are_used_a_still_rejected_review_fails_the_run(project, alice, scripted_runner,
                                                                       inline_executor):
    scripted_runner.replies[("node", "review")] = REJECTED
    run = _run(project, alice, rounds=2)
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "failed"
    assert run.executions.filter(node_id="review-gate").count() == 3
    assert run.executions.filter(node_id="cases").count() == 3
    assert run.executions.get(node_id="automate").status == "blocked"
