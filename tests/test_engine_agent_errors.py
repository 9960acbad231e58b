"""Transient agent errors are retried with capped exponential backoff; permanent ones are not."""

from __future__ import annotations

import pytest

from graphs.agents import AgentError
from graphs.engine import run_start
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_backoff(settings):
    settings.WORKGRAPH_BACKOFF_BASE = 0.01
    settings.WORKGRAPH_BACKOFF_CAP = 0.02
    settings.WORKGRAPH_TRANSIENT_RETRIES = 3


def chain() -> dict:
    nodes = [node("first"), node("second", "first")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def test_a_rate_limit_is_retried_as_a_new_attempt_after_a_backoff(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first", 1)] = AgentError("slow down", kind="rate_limit")
    scripted_runner.replies[("node", "first", 2)] = AgentError("overloaded", kind="unavailable")
    run = planned_run(task, chain())
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    rows = list(run.executions.filter(node_id="first").order_by("attempt"))
    assert [(r.attempt, r.cause, r.status) for r in rows] == [
        (1, "initial", "failed"), (2, "transient_retry", "failed"), (3, "transient_retry", "succeeded"),
    ]
    assert "rate_limit" in rows[0].error
    assert rows[1].not_before is not None and rows[2].not_before > rows[1].not_before
    assert run.status == "succeeded"


def test_transient_retries_are_bounded(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first")] = AgentError("timed out", kind="timeout")
    run = planned_run(task, chain())
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    assert run.executions.filter(node_id="first").count() == 1 + 3
    assert latest(run)["second"].status == "blocked"
    assert run.status == "failed"


@pytest.mark.parametrize("kind", ["auth", "quota", "invalid_output", "is_error"])
def test_a_permanent_error_fails_the_node_without_retrying(task, scripted_runner, inline_executor, kind):
    scripted_runner.replies[("node", "first")] = AgentError("no", kind=kind)
    run = planned_run(task, chain())
    run_start(run=run)
    inline_executor.drain()
    assert run.executions.filter(node_id="first").count() == 1
    assert f"agent error ({kind})" in latest(run)["first"].error


def test_an_unreadable_judge_answer_is_a_failed_judgment_not_a_crash(task, scripted_runner, inline_executor):
    nodes = [node("only", judgment={"kind": "llm", "judge_prompt": "Judge {content}"}, on_fail={"action": "hard_fail"})]
    scripted_runner.replies[("judge", "only")] = "I think it is fine, mostly."
    run = planned_run(task, {"nodes": nodes, "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["only"]
    assert row.status == "failed"
    assert row.judgment_result["issues"] == ["the judge's answer held no {ok, issues} JSON object"]
