"""A 12-node graph exercising fan-out, loop-back, retry_self, hard_fail and zero-token aggregation."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from graphs.models import Artifact, WorkGraphRun
from tests.run_builders import edges_for, latest, node, planned_run
from tests.scripted_agents import judge

pytestmark = pytest.mark.django_db

REVIEW_JUDGE = {"kind": "llm", "judge_prompt": "Is this draft faithful to the spec?\n\n{content}"}


def twelve_node_manifest() -> dict:
    nodes = [
        node("root"),
        node("a1", "root"),
        node("a2", "root"),
        node("a3", "root"),
        node("spec", "root", promotes_to_artifact={"artifact_type": "spec"}),
        node("draft", "spec"),
        node("review", "draft", judgment=REVIEW_JUDGE, on_fail={"action": "loop_back", "max_attempts": 3}),
        node("flaky", "a1", judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"},
             on_fail={"action": "retry_self", "max_attempts": 3}),
        node("doomed", "a2", judgment={"kind": "mechanical", "check_ref": "check_script_compiles"},
             on_fail={"action": "hard_fail"}),
        node("after_doomed", "doomed"),
        node("after_after", "after_doomed"),
        node("join", "a3", "review", "flaky"),
    ]
    edges = [*edges_for(nodes, zero_token={"join"}), {"from": "review", "to": "spec", "edge_type": "on_failure"}]
    return {"nodes": nodes, "edges": edges}


@pytest.fixture
def finished_run(task, scripted_runner, inline_executor):
    scripted_runner.replies.update(
        {
            ("judge", "review", 1): judge(False, "the draft ignores the export size limit"),
            ("judge", "review", 2): judge(True),
            ("node", "flaky", 1): "**VERDICT:** fail — numbers do not add up",
            ("node", "flaky", 2): "Checked again.\nVERDICT: pass",
            ("node", "doomed"): "```python\ndef broken(:\n```",
        }
    )
    run = planned_run(task, twelve_node_manifest())
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    return run


def test_the_run_fails_because_of_the_hard_fail_branch_only(finished_run):
    assert finished_run.status == WorkGraphRun.Status.FAILED
    assert "doomed" in finished_run.error and "after_doomed" in finished_run.error
    statuses = {node_id: row.status for node_id, row in latest(finished_run).items()}
    assert statuses == {
        "root": "succeeded", "a1": "succeeded", "a2": "succeeded", "a3": "succeeded",
        "spec": "succeeded", "draft": "succeeded", "review": "succeeded", "flaky": "succeeded",
        "doomed": "failed", "after_doomed": "blocked", "after_after": "blocked", "join": "succeeded",
    }


def test_a_loop_back_reruns_the_target_and_everything_between_with_the_judges_issues(finished_run):
    rows = latest(finished_run)
    for node_id in ("spec", "draft", "review"):
        assert (rows[node_id].attempt, rows[node_id].cause, rows[node_id].cause_node_id) == (2, "loop_back", "review")
    assert rows["spec"].input_payload["feedback"] == [
        "Node 'review' failed its judgment after using this work: the draft ignores the export size limit"
    ]
    assert "the draft ignores the export size limit" in rows["spec"].input_payload["prompt"]
    first_review = finished_run.executions.get(node_id="review", attempt=1)
    assert first_review.status == "failed"
    assert first_review.judgment_result["issues"] == ["the draft ignores the export size limit"]


def test_retry_self_reruns_only_the_failing_node(finished_run):
    attempts = list(finished_run.executions.filter(node_id="flaky").values_list("attempt", "cause", "status"))
    assert attempts == [(1, "initial", "failed"), (2, "retry_self", "succeeded")]
    assert finished_run.executions.filter(node_id="a1").count() == 1


def test_hard_fail_blocks_every_dependant_and_is_not_retried(finished_run):
    assert finished_run.executions.filter(node_id="doomed").count() == 1
    blocked = finished_run.executions.get(node_id="after_doomed")
    assert blocked.error == "blocked: upstream doomed did not succeed"
    assert finished_run.executions.get(node_id="after_after").error == "blocked: upstream after_doomed did not succeed"


def test_a_zero_token_node_aggregates_without_an_agent_call(finished_run, scripted_runner):
    assert "join" not in {node_id for node_id, _ in scripted_runner.node_calls()}
    text = latest(finished_run)["join"].output_payload["text"]
    assert "## a3" in text and "## review" in text and "## flaky" in text
    assert "output of review attempt 2" in text


def test_upstream_outputs_are_handed_to_dependants(finished_run):
    draft = latest(finished_run)["draft"]
    assert draft.input_payload["upstream"] == ["spec"]
    assert "output of spec attempt 2" in draft.input_payload["prompt"]


def test_every_attempt_is_its_own_row_with_timings_and_a_closed_log(finished_run):
    rows = list(finished_run.executions.exclude(node_id__startswith="__"))
    assert len(rows) == 12 + 3 + 1  # loop-back reran three nodes, retry_self one
    ran = [row for row in rows if row.status in ("succeeded", "failed")]
    assert all(row.ready_at and row.started_at and row.finished_at for row in ran)
    assert all(row.log_file.status == "closed" for row in ran)


def test_a_node_that_passes_promotes_its_artifact_once(finished_run):
    artifact = Artifact.objects.get(run=finished_run)
    assert artifact.artifact_type == "spec"
    assert artifact.node_exec.attempt == 2
    assert artifact.content == "output of spec attempt 2"


def test_loop_back_stops_after_max_attempts(task, scripted_runner, inline_executor):
    scripted_runner.replies[("judge", "review")] = judge(False, "still wrong")
    run = planned_run(task, twelve_node_manifest())
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    reviews = list(run.executions.filter(node_id="review").values_list("attempt", "status"))
    assert reviews == [(1, "failed"), (2, "failed"), (3, "failed")]
    assert latest(run)["join"].status == "blocked"
    assert run.status == "failed"
