"""A revision round is told what the audit found: the verdict's own words, not only that it was not pass."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from graphs.models import WorkGraphRun
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db

AUDIT = (
    "VERDICT: request-revision\n"
    "1. The export has no header row.\n"
    "2. Dates are written in local time, the contract says UTC."
)
GATE = {"kind": "mechanical", "check_ref": "verdict_says_pass"}


def gated_manifest(on_fail: dict) -> dict:
    nodes = [node("draft"), node("audit", "draft", judgment=GATE, on_fail=on_fail)]
    return {"nodes": nodes, "edges": [*edges_for(nodes), {"from": "audit", "to": "draft", "edge_type": "on_failure"}]}


def run_with_audit(task, scripted_runner, inline_executor, on_fail: dict) -> WorkGraphRun:
    scripted_runner.replies[("node", "audit", 1)] = AUDIT
    scripted_runner.replies[("node", "audit", 2)] = "VERDICT: pass"
    run = planned_run(task, gated_manifest(on_fail))
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    return run


def test_a_loop_back_revision_round_carries_the_whole_verdict(task, scripted_runner, inline_executor):
    run = run_with_audit(task, scripted_runner, inline_executor, {"action": "loop_back", "max_attempts": 2})
    assert run.status == WorkGraphRun.Status.SUCCEEDED
    revised = latest(run)["draft"]
    assert (revised.attempt, revised.cause) == (2, "loop_back")
    [issue, verdict] = revised.input_payload["feedback"]
    assert issue == (
        "Node 'audit' failed its judgment after using this work: the verdict is 'request-revision', not pass"
    )
    assert "The export has no header row." in verdict and "the contract says UTC" in verdict
    assert "Dates are written in local time" in revised.input_payload["prompt"]


def test_a_retried_audit_sees_its_own_findings(task, scripted_runner, inline_executor):
    run = run_with_audit(task, scripted_runner, inline_executor, {"action": "retry_self", "max_attempts": 2})
    retried = latest(run)["audit"]
    assert retried.attempt == 2
    assert any("The export has no header row." in line for line in retried.input_payload["feedback"])


def test_an_llm_judges_issues_stand_alone(task, scripted_runner, inline_executor):
    nodes = [node("draft"), node("review", "draft", judgment={"kind": "llm", "judge_prompt": "Fine?\n\n{content}"},
                                 on_fail={"action": "loop_back", "max_attempts": 2})]
    loop = {"from": "review", "to": "draft", "edge_type": "on_failure"}
    manifest = {"nodes": nodes, "edges": [*edges_for(nodes), loop]}
    scripted_runner.replies[("node", "review", 1)] = "VERDICT: pass\nsecret working notes"
    scripted_runner.replies[("judge", "review", 1)] = '{"ok": false, "issues": ["too short"]}'
    run = planned_run(task, manifest)
    run_start(run=run)
    inline_executor.drain()
    assert latest(run)["draft"].input_payload["feedback"] == [
        "Node 'review' failed its judgment after using this work: too short"
    ]
