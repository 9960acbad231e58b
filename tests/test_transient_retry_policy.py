"""A node's ``retry_policy`` sets its own transient-retry budget, delays and kinds; a node whose
``tool_profile`` is ``write`` is never retried on a transient error, and its attempt says why."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

import pytest
from django.utils import timezone

from graphs.agents import AgentError
from graphs.engine import executions_reap, run_start
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, WorkNodeExecution
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def shared_budget(settings):
    settings.WORKGRAPH_BACKOFF_BASE = 0.01
    settings.WORKGRAPH_BACKOFF_CAP = 0.02
    settings.WORKGRAPH_TRANSIENT_RETRIES = 3


def _run(task, **fields):
    nodes = [node("first", **fields), node("second", "first")]
    return planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})


def _attempts(run) -> list:
    return list(run.executions.filter(node_id="first").order_by("attempt"))


def test_a_nodes_max_retries_replaces_the_shared_budget(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first")] = AgentError("timed out", kind="timeout")
    run = _run(task, retry_policy={"max_retries": 1, "delays_seconds": [0]})
    run_start(run=run)
    inline_executor.drain()
    assert [(row.attempt, row.cause) for row in _attempts(run)] == [(1, "initial"), (2, "transient_retry")]
    run.refresh_from_db()
    assert run.status == "failed"


def test_a_policy_of_no_retries_fails_the_node_at_its_first_transient_error(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first", 1)] = AgentError("overloaded", kind="unavailable")
    run = _run(task, retry_policy={"max_retries": 0})
    run_start(run=run)
    inline_executor.drain()
    assert len(_attempts(run)) == 1


def test_each_retry_waits_the_policys_delay_for_it_and_the_last_delay_repeats(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first")] = AgentError("slow down", kind="rate_limit")
    run = _run(task, retry_policy={"max_retries": 3, "delays_seconds": [0, 0.5]})
    run_start(run=run)
    inline_executor.drain()
    rows = _attempts(run)
    assert [row.cause for row in rows] == ["initial", *["transient_retry"] * 3]
    assert rows[1].not_before is None
    for failed, retry in pairwise(rows[1:]):
        waited = (retry.not_before - failed.finished_at).total_seconds()
        assert 0.4 <= waited <= 5


def test_a_kind_the_policy_does_not_name_is_not_retried(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first")] = AgentError("timed out", kind="timeout")
    run = _run(task, retry_policy={"max_retries": 3, "kinds": ["network", "rate_limit"]})
    run_start(run=run)
    inline_executor.drain()
    [only] = _attempts(run)
    assert "retries only network, rate_limit, not timeout" in only.error


def test_a_write_node_is_not_retried_on_a_transient_error_and_says_why(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first")] = AgentError("connection reset", kind="network")
    run = _run(task, tool_profile="write", retry_policy={"max_retries": 3})
    run_start(run=run)
    inline_executor.drain()
    [only] = _attempts(run)
    assert only.status == "failed"
    assert only.error.startswith("agent error (network): connection reset")
    assert "not retried: the node's tool_profile is write" in only.error
    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=only))
    [skipped] = [line for line in lines if line["event"] == "transient_retry_skipped"]
    assert (skipped["kind"], "side effects" in skipped["reason"]) == ("network", True)
    assert latest(run)["second"].status == "blocked"


def test_a_read_node_is_retried_as_before(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "first", 1)] = AgentError("connection reset", kind="network")
    run = _run(task, tool_profile="read")
    run_start(run=run)
    inline_executor.drain()
    assert [row.status for row in _attempts(run)] == ["failed", "succeeded"]
    run.refresh_from_db()
    assert run.status == "succeeded"


def test_a_write_node_whose_worker_was_lost_is_not_retried_either(task, scripted_runner, inline_executor):
    run = _run(task, tool_profile="write")
    run_start(run=run)
    first = run.executions.get(node_id="first")
    long_ago = timezone.now() - timedelta(minutes=10)
    WorkNodeExecution.objects.filter(pk=first.pk).update(
        status="running", worker="host:1:1", started_at=long_ago, heartbeat_at=long_ago
    )
    inline_executor.drain()
    assert executions_reap(stale_after=timedelta(seconds=30)) == [str(first.pk)]
    inline_executor.drain()
    [only] = _attempts(run)
    assert "worker host:1:1 stopped" in only.error
    assert "not retried: the node's tool_profile is write" in only.error
    assert scripted_runner.node_calls() == []
