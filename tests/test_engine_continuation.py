"""A node job runs the dependant it made ready itself, for a while, instead of a broker round trip each."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.engine import attempt, run_start, state
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile, WorkGraphRun
from graphs.profiles.resolve import profiles_ensure_shipped
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


def _chain(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def test_a_chain_runs_in_the_job_that_started_it(task, scripted_runner, inline_executor):
    run = planned_run(task, _chain(6))
    run_start(run=run)

    assert inline_executor.drain() == 1
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert [call[0] for call in scripted_runner.node_calls()] == [f"n{i}" for i in range(6)]
    rows = latest(run)
    assert all(rows[f"n{i}"].started_at >= rows[f"n{i - 1}"].finished_at for i in range(1, 6))


def test_the_next_node_is_claimed_in_the_advance_that_readies_it_and_gets_its_input_in_hand(
    task, scripted_runner, inline_executor
):
    run = planned_run(task, _chain(3))
    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    for node_id in ("n1", "n2"):
        # Never queued for a broker: ready and started in the same transaction, by the same worker.
        assert rows[node_id].ready_at == rows[node_id].started_at
        assert rows[node_id].worker == rows["n0"].worker
        assert rows[node_id].input_payload["upstream"] == [f"n{int(node_id[1]) - 1}"]
        lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=rows[node_id]))
        assert [line["event"] for line in (lines[0], lines[-1])] == ["node_start", "node_finished"]
    assert set(ExecutionLogFile.objects.filter(node_exec__run=run).values_list("status", flat=True)) == {"closed"}
    # The prompt of n2 holds n1's output although it was never read back from the database.
    assert rows["n1"].output_payload["text"] in rows["n2"].input_payload["prompt"]


def test_a_claimed_dependant_runs_as_its_own_row_says_though_it_is_not_read_again(
    task, scripted_runner, inline_executor
):
    """The continuing worker builds the next attempt from the rows its advance read: a later attempt's
    feedback, cause and org node must come through exactly as if the row had been loaded."""
    run = planned_run(task, _chain(2))
    run_start(run=run)
    run.executions.filter(node_id="n1").update(
        attempt=2, cause="loop_back", cause_node_id="n9", subagent_type="reviewer",
        input_payload={"feedback": ["keep the summary under ten lines"], "kept": "as written"},
    )
    inline_executor.drain()

    assert [call[1:] for call in scripted_runner.calls if call[0] == "node"] == [("n0", 1), ("n1", 2)]
    n1 = latest(run)["n1"]
    assert (n1.status, n1.attempt, n1.cause, n1.cause_node_id) == ("succeeded", 2, "loop_back", "n9")
    assert "keep the summary under ten lines" in n1.input_payload["prompt"]
    assert n1.input_payload["kept"] == "as written"
    assert n1.subagent_type == "reviewer"
    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=n1))
    assert (lines[0]["event"], lines[0]["attempt"], lines[0]["cause"]) == ("node_start", 2, "loop_back")
    assert [line["org_node"] for line in lines if line["event"] == "agent_call"] == ["reviewer"]


@pytest.mark.django_db(transaction=True)
def test_a_chain_node_costs_a_fixed_number_of_queries(task, scripted_runner, inline_executor, monkeypatch):
    """Per node: its result and its log line, the claim of the next node (the conditional UPDATE that
    reads what decides it and returns what running it needs: no run lock, no read of its row) and that
    one's log row (on PostgreSQL, in the claim's statement) — and the transaction's two statements;
    the log's close goes to the closer thread. The agent profile a node's call runs with is resolved by
    the job's first node only, the others reuse it. Growing this is growing every node's cost. The
    node's other log lines go to the log writer (one INSERT for many, on its own connection), as they
    do in a worker: the test runs outside a test transaction to see that. The engine's two clocks are
    held still, so the count does not depend on how fast the machine is (a progress count at most
    every half second; a job goes on with the chain for five)."""
    monkeypatch.setattr(state, "PROGRESS_EVERY_SECONDS", math.inf)
    monkeypatch.setattr(attempt, "CONTINUE_FOR_SECONDS", math.inf)
    profiles_ensure_shipped()  # made on first use otherwise, in the first run's count only
    counts = {}
    for length in (4, 12):
        run = planned_run(task, _chain(length))
        run_start(run=run)
        with CaptureQueriesContext(connection) as queries:
            inline_executor.drain()
        assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
        counts[length] = len(queries)
    # On PostgreSQL the claim's statement makes the dependant's log header too.
    assert (counts[12] - counts[4]) / 8 == (5 if connection.vendor == "postgresql" else 6)


def test_a_fan_out_keeps_one_branch_and_hands_out_the_others(task, scripted_runner, inline_executor):
    nodes = [node("root"), node("a", "root"), node("b", "root"), node("c", "root"), node("join", "a", "b", "c")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)

    # root's job goes on with "a"; "b" and "c" go through the executor; whichever finishes last runs "join".
    assert inline_executor.drain() == 3
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


def test_past_its_time_a_job_hands_every_dependant_out(task, scripted_runner, inline_executor, monkeypatch):
    monkeypatch.setattr(attempt, "CONTINUE_FOR_SECONDS", 0.0)
    run = planned_run(task, _chain(6))
    run_start(run=run)

    assert inline_executor.drain() == 6
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


def test_a_dependant_in_backoff_is_not_kept(task, scripted_runner, inline_executor, monkeypatch):
    """A retry waiting out its backoff goes through the executor with its delay, never run early."""
    nodes = [node("first"), node("second", "first")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    # A backoff no machine's load outlasts: the first node ends well inside it, whatever its pace.
    run.executions.filter(node_id="second").update(not_before=timezone.now() + timedelta(hours=1))
    delays: list[float] = []
    submit = inline_executor.submit

    def submitted(name: str, arg: str, *, delay: float = 0.0) -> None:
        delays.append(delay)
        submit(name, arg, delay=delay)

    monkeypatch.setattr(inline_executor, "submit", submitted)

    assert inline_executor.drain_due() == 1
    rows = latest(run)
    assert rows["first"].status == "succeeded"
    assert rows["second"].started_at is None, "a dependant in its backoff was run early"
    assert inline_executor.pending() == 1
    assert len(delays) == 1 and 3500 < delays[0] <= 3600, "the dependant's job waits out the rest of its backoff"
    inline_executor.discard()
