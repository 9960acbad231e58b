"""required_evidence gates a node's success: without it the node is partial and its dependants are blocked."""

from __future__ import annotations

import pytest

from graphs.collaboration.reports import node_result_report
from graphs.engine import run_fork, run_start
from graphs.models import Task, WorkGraphRun
from graphs.runs.evidence import evidence_gaps
from tests.run_builders import latest, node, planned_run

pytestmark = pytest.mark.django_db

TOOL_BLOCK = "Fetched.\n```tool_result\n{\"status\": 200}\n```\n"


@pytest.mark.parametrize(
    ("required", "output", "events", "gaps"),
    [
        (["output"], "  \n", [], ["missing required evidence: output"]),
        (["output"], "A report.", [], []),
        (["url"], "See www.example.test or ftp://example.test/x", [], ["missing required evidence: url"]),
        (["url"], "Source: https://example.test/filing.pdf.", [], []),
        (["url"], "Broken: https:///nohost", [], ["missing required evidence: url"]),
        (["tool_result"], "I looked it up.", [], ["missing required evidence: tool_result"]),
        (["tool_result"], TOOL_BLOCK, [], []),
        (["tool_result"], "```tool_result\n\n```", [], ["missing required evidence: tool_result"]),
        (["tool_result"], "Done.", ["agent_output", "tool_result"], []),
        (["screenshot", "output"], "A report.", [], ["unsupported evidence requirement: screenshot"]),
    ],
)
def test_evidence_is_recognised_as_documented(required, output, events, gaps):
    assert evidence_gaps(required=required, output=output, log_events=events) == gaps


def run_through(task, manifest, runner, executor, **replies) -> WorkGraphRun:
    runner.replies.update({("node", node_id): text for node_id, text in replies.items()})
    run = planned_run(task, manifest)
    run_start(run=run)
    executor.drain()
    run.refresh_from_db()
    return run


def collect_then_report(**collect_extra) -> dict:
    return {"nodes": [node("collect", required_evidence=["url"], **collect_extra), node("report", "collect")],
            "edges": []}


def test_a_node_without_its_evidence_is_partial_with_the_gaps(task, scripted_runner, inline_executor):
    run = run_through(task, collect_then_report(), scripted_runner, inline_executor, collect="Revenue grew 4%.")
    collect = latest(run)["collect"]
    assert collect.status == "partial"
    assert collect.judgment_result["evidence_gaps"] == ["missing required evidence: url"]
    assert collect.error == "incomplete: missing required evidence: url"
    assert collect.output_payload["text"] == "Revenue grew 4%."


def test_the_dependants_of_a_required_partial_node_are_blocked(task, scripted_runner, inline_executor):
    run = run_through(task, collect_then_report(), scripted_runner, inline_executor, collect="No sources.")
    report = latest(run)["report"]
    assert report.status == "blocked"
    assert report.error == "blocked: upstream collect did not succeed"
    assert ("report", 1) not in scripted_runner.node_calls()


def test_the_task_outcome_is_incomplete_and_lists_the_nodes_and_gaps(task, scripted_runner, inline_executor):
    run = run_through(task, collect_then_report(), scripted_runner, inline_executor, collect="No sources.")
    assert run.status == WorkGraphRun.Status.FAILED
    task.refresh_from_db()
    assert task.status == Task.Status.INCOMPLETE
    assert task.outcome["incomplete_nodes"] == [{"node_id": "collect", "gaps": ["missing required evidence: url"]}]
    assert task.outcome["blocked_nodes"] == ["report"]
    assert task.outcome["error"] == "incomplete — collect: missing required evidence: url"


def test_a_node_with_its_evidence_succeeds_and_the_run_goes_on(task, scripted_runner, inline_executor):
    run = run_through(task, collect_then_report(), scripted_runner, inline_executor,
                      collect="Revenue grew 4% (https://example.test/10-K).")
    assert {n: row.status for n, row in latest(run).items()} == {"collect": "succeeded", "report": "succeeded"}
    assert run.status == WorkGraphRun.Status.SUCCEEDED


def test_a_partial_node_not_required_for_completion_lets_its_dependants_run(task, scripted_runner, inline_executor):
    manifest = collect_then_report(required_for_completion=False)
    run = run_through(task, manifest, scripted_runner, inline_executor, collect="Revenue grew 4%.")
    assert {n: row.status for n, row in latest(run).items()} == {"collect": "partial", "report": "succeeded"}
    assert run.status == WorkGraphRun.Status.SUCCEEDED
    assert "Revenue grew 4%." in latest(run)["report"].input_payload["prompt"]


def test_a_fork_below_a_partial_node_not_required_reuses_it_as_partial(task, scripted_runner, inline_executor):
    manifest = collect_then_report(required_for_completion=False)
    run = run_through(task, manifest, scripted_runner, inline_executor, collect="Revenue grew 4%.")

    fork = run_fork(run=run, node_id="report")
    inline_executor.drain()
    fork.refresh_from_db()

    rows = latest(fork)
    assert (rows["collect"].cause, rows["collect"].status) == ("fork", "partial")
    assert rows["collect"].error == "incomplete: missing required evidence: url"
    assert (rows["report"].status, fork.status) == ("succeeded", WorkGraphRun.Status.SUCCEEDED)
    assert [call for call in scripted_runner.node_calls() if call[0] == "collect"] == [("collect", 1)]


def test_a_required_partial_leaf_still_keeps_the_run_from_succeeding(task, scripted_runner, inline_executor):
    manifest = {"nodes": [node("only", required_evidence=["tool_result"])], "edges": []}
    run = run_through(task, manifest, scripted_runner, inline_executor, only="Trust me.")
    assert run.status == WorkGraphRun.Status.FAILED
    assert run.error == "nodes that did not succeed: only"
    task.refresh_from_db()
    assert task.status == Task.Status.INCOMPLETE


def test_a_failure_elsewhere_makes_the_task_failed_not_incomplete(task, scripted_runner, inline_executor):
    manifest = {
        "nodes": [
            node("collect", required_evidence=["url"]),
            node("doomed", judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"},
                 on_fail={"action": "hard_fail"}),
        ],
        "edges": [],
    }
    run_through(task, manifest, scripted_runner, inline_executor, collect="No sources.", doomed="VERDICT: fail")
    task.refresh_from_db()
    assert task.status == Task.Status.FAILED
    assert "incomplete_nodes" not in task.outcome


def test_a_reported_result_without_its_evidence_is_partial_too(task, alice, scripted_runner, inline_executor):
    run = planned_run(task, {"nodes": [node("cite", executor="external", required_evidence=["url"])], "edges": []})
    run_start(run=run)
    inline_executor.discard()  # an external bot does the work and reports it
    node_result_report(task=task, node_id="cite", success=True, data={"result": "Trust me."}, gaps=[],
                       reporter=alice)
    row = latest(run)["cite"]
    assert row.status == "partial"
    assert row.judgment_result["evidence_gaps"] == ["missing required evidence: url"]
