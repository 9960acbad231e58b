"""The node statuses a transaction announces for one run, one after another, go out as one event once it
commits: a chain node's end and its dependant's claim are one message to the run's watchers."""

from __future__ import annotations

import uuid

import pytest
from django.db import transaction

from graphs.engine import run_start
from graphs.logs.events import node_states_emit, run_event_emit
from graphs.models import WorkGraphRun
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


def _nodes(event: dict) -> list[tuple[str, str]]:
    return [(state["node_id"], state["status"]) for state in event["nodes"]]


def test_one_runs_statuses_in_a_row_join_in_the_order_they_were_emitted(run_events_heard):
    run, other = uuid.uuid4(), uuid.uuid4()
    with transaction.atomic():
        node_states_emit(run_id=run, rows=[_state("n0", "succeeded")])
        transaction.on_commit(lambda: None)  # what else waits for the commit does not part them
        node_states_emit(run_id=run, rows=[_state("n1", "running")])
        node_states_emit(run_id=other, rows=[_state("n0", "queued")])
        run_event_emit(run_id=run, event="progress", done=1)
        node_states_emit(run_id=run, rows=[_state("n2", "running")])
        assert run_events_heard == []

    assert [(event["event"], event["run_id"]) for event in run_events_heard] == [
        ("nodes", str(run)), ("nodes", str(other)), ("progress", str(run)), ("nodes", str(run))]
    assert _nodes(run_events_heard[0]) == [("n0", "succeeded"), ("n1", "running")]
    assert _nodes(run_events_heard[3]) == [("n2", "running")]


def test_statuses_a_rolled_back_savepoint_emitted_are_not_announced(run_events_heard):
    run = uuid.uuid4()
    with transaction.atomic():
        node_states_emit(run_id=run, rows=[_state("n0", "succeeded")])
        with transaction.atomic():
            node_states_emit(run_id=run, rows=[_state("n1", "running")])
            transaction.set_rollback(True)
        node_states_emit(run_id=run, rows=[_state("n2", "running")])

    assert [_nodes(event) for event in run_events_heard] == [[("n0", "succeeded"), ("n2", "running")]]


def test_a_chain_node_announces_its_end_and_its_dependants_claim_in_one_event(
    task, scripted_runner, inline_executor, run_events_heard
):
    run = planned_run(task, _chain(3))
    run_start(run=run)
    run_events_heard.clear()
    inline_executor.drain()

    nodes_events = [_nodes(event) for event in run_events_heard if event["event"] == "nodes"]
    assert [("n0", "running")] in nodes_events
    assert [("n0", "succeeded"), ("n1", "running")] in nodes_events
    assert [("n1", "succeeded"), ("n2", "running")] in nodes_events
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


def _chain(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def _state(node_id: str, status: str) -> dict:
    return {"pk": uuid.uuid4(), "node_id": node_id, "attempt": 1, "status": status, "cause": "initial"}
