"""A run's live events over a WebSocket: the snapshot on connect, then node, append, status and log events."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from console.asgi import application
from console.consumers import run_events
from graphs.engine import run_start
from graphs.logs.events import run_event_emit
from graphs.models import WorkNodeExecution
from graphs.reads.live import run_snapshot_read
from tests import factories
from tests.clients import socket_headers
from tests.run_builders import edges_for, node, planned_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

TIMEOUT = 3



@pytest.fixture
def started_run(task, inline_executor, scripted_runner):
    """A run of ``a → b`` just started: ``a`` is queued on the inline executor, ``b`` waits for it."""
    nodes = [node("a"), node("b", "a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    return run


async def connect_run(user, run) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=await socket_headers(user))
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


async def events_until(communicator: WebsocketCommunicator, event: str) -> list[dict]:
    """Receive run events up to and including the first one named ``event``."""
    received = []
    while True:
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert message["type"] == "event", message
        received.append(message["event"])
        if message["event"]["event"] == event:
            return received


def node_exec_ids(run) -> dict[str, str]:
    return {row.node_id: str(row.pk) for row in WorkNodeExecution.objects.filter(run=run)}


async def test_the_snapshot_on_connect_holds_status_progress_and_each_nodes_latest_attempt(alice, started_run):
    ids = await sync_to_async(node_exec_ids)(started_run)
    communicator = await connect_run(alice, started_run)
    try:
        snapshot = await communicator.receive_json_from(timeout=TIMEOUT)
    finally:
        await communicator.disconnect()
    assert snapshot["type"] == "snapshot"
    assert snapshot["run_id"] == str(started_run.pk)
    assert snapshot["status"] == "running"
    assert snapshot["manifest_version"] == 1
    assert (snapshot["progress"]["done"], snapshot["progress"]["total"], snapshot["progress"]["active"]) == (0, 2, 2)
    nodes = {item["node_id"]: item for item in snapshot["nodes"]}
    assert nodes["a"] == {
        "node_id": "a",
        "node_exec_id": ids["a"],
        "attempt": 1,
        "status": "queued",
        "cause": "initial",
    }
    assert nodes["b"]["status"] == "pending"
    assert nodes["__planning__"]["status"] == "succeeded"


async def test_node_status_changes_log_lines_and_the_run_status_arrive_as_the_run_executes(
    alice, started_run, inline_executor
):
    ids = await sync_to_async(node_exec_ids)(started_run)
    communicator = await connect_run(alice, started_run)
    try:
        assert (await communicator.receive_json_from(timeout=TIMEOUT))["type"] == "snapshot"
        await sync_to_async(inline_executor.drain)()
        events = await events_until(communicator, "run_status")
        # A line is published once stored, which may be just after the status it led up to.
        while sum(1 for e in events if e.get("line_event") == "node_finished") < 2:
            events.append((await communicator.receive_json_from(timeout=TIMEOUT))["event"])
    finally:
        await communicator.disconnect()

    statuses = [(item["node_id"], item["status"]) for e in events if e["event"] == "nodes" for item in e["nodes"]]
    # b is claimed by the worker that ran a, in the transaction that readies it: never seen queued.
    assert statuses == [("a", "running"), ("a", "succeeded"), ("b", "running"), ("b", "succeeded")]
    logs_of_a = [e for e in events if e["event"] == "log" and e["node_id"] == "a"]
    assert [e["seq"] for e in logs_of_a] == list(range(1, len(logs_of_a) + 1))
    assert logs_of_a[0] == {
        "event": "log",
        "run_id": str(started_run.pk),
        "node_exec_id": ids["a"],
        "node_id": "a",
        "seq": 1,
        "line_event": "node_start",
    }
    assert "text" not in str(logs_of_a), "the run group gets no log text"
    assert {
        "event": "progress", "run_id": str(started_run.pk), "done": 2, "total": 2, "succeeded": 2, "partial": 0,
        "failed": 0, "blocked": 0, "cancelled": 0, "active": 0, "awaiting_review": 0,
        "summary": "2/2 done · 2 succeeded",
    } in events
    assert events[-1] == {"event": "run_status", "run_id": str(started_run.pk), "status": "succeeded", "error": ""}


async def test_appended_nodes_are_announced(alice, started_run):
    communicator = await connect_run(alice, started_run)
    try:
        await communicator.receive_json_from(timeout=TIMEOUT)
        await sync_to_async(run_event_emit)(
            run_id=started_run.pk, event="nodes_appended", org_node="coder", new_node_ids=["impl"], manifest_version=2
        )
        assert await events_until(communicator, "nodes_appended") == [
            {
                "event": "nodes_appended",
                "run_id": str(started_run.pk),
                "org_node": "coder",
                "new_node_ids": ["impl"],
                "manifest_version": 2,
            }
        ]
    finally:
        await communicator.disconnect()


async def test_events_of_another_run_do_not_arrive(alice, started_run, task):
    other = await sync_to_async(factories.RunFactory)(task=task)
    communicator = await connect_run(alice, started_run)
    try:
        await communicator.receive_json_from(timeout=TIMEOUT)
        await sync_to_async(run_event_emit)(run_id=other.pk, event="run_status", status="failed")
        await sync_to_async(run_event_emit)(run_id=started_run.pk, event="run_status", status="cancelled")
        assert [e["status"] for e in await events_until(communicator, "run_status")] == ["cancelled"]
    finally:
        await communicator.disconnect()


def test_the_snapshot_takes_two_queries_whatever_the_number_of_nodes_and_attempts(task, django_assert_num_queries):
    nodes = [{"node_id": node_id, "depends_on": [], "task_prompt": "x"} for node_id in "abcd"]
    manifest = {"nodes": nodes, "edges": []}
    run = factories.RunFactory(task=task, status="running", graph_manifest=manifest)
    for node_id in ("a", "b", "c", "d"):
        for attempt in (1, 2, 3):
            factories.ExecutionFactory(run=run, node_id=node_id, attempt=attempt, status="failed")
    factories.ExecutionFactory(run=run, node_id="d", attempt=4, status="running", cause="retry_self")

    with django_assert_num_queries(2):
        snapshot = run_snapshot_read(run_id=run.pk)

    latest = {item["node_id"]: (item["attempt"], item["status"], item["cause"]) for item in snapshot["nodes"]}
    assert latest == {
        "a": (3, "failed", "initial"),
        "b": (3, "failed", "initial"),
        "c": (3, "failed", "initial"),
        "d": (4, "running", "retry_self"),
    }
    assert snapshot["progress"] == {
        "done": 3, "total": 4, "succeeded": 0, "partial": 0, "failed": 3, "blocked": 0, "cancelled": 0, "active": 1,
        "awaiting_review": 0, "summary": "3/4 done · 3 failed",
    }


async def test_a_change_no_event_announced_arrives_as_a_fresh_snapshot(alice, started_run, monkeypatch):
    """As when another process runs the node in the embedded mode: its events cannot reach this one."""
    monkeypatch.setattr(run_events, "RUN_RESYNC_SECONDS", 0.1)
    communicator = await connect_run(alice, started_run)
    try:
        first = await communicator.receive_json_from(timeout=TIMEOUT)
        assert await communicator.receive_nothing(timeout=0.5), "a snapshot came with nothing changed"
        await sync_to_async(
            WorkNodeExecution.objects.filter(run=started_run, node_id="a").update
        )(status="running", started_at=timezone.now(), worker="elsewhere:1:1")
        fresh = await communicator.receive_json_from(timeout=TIMEOUT)
    finally:
        await communicator.disconnect()
    assert (first["type"], fresh["type"]) == ("snapshot", "snapshot")
    assert {item["node_id"]: item["status"] for item in fresh["nodes"]}["a"] == "running"


async def test_a_change_announced_by_events_brings_no_extra_snapshot(alice, started_run, monkeypatch):
    monkeypatch.setattr(run_events, "RUN_RESYNC_SECONDS", 0.2)
    communicator = await connect_run(alice, started_run)
    try:
        await communicator.receive_json_from(timeout=TIMEOUT)

        def start_a_with_its_event() -> None:
            WorkNodeExecution.objects.filter(run=started_run, node_id="a").update(
                status="running", started_at=timezone.now()
            )
            run_event_emit(run_id=started_run.pk, event="nodes", nodes=[{"node_id": "a", "status": "running"}])

        await sync_to_async(start_a_with_its_event)()
        assert [e["event"] for e in await events_until(communicator, "nodes")] == ["nodes"]
        assert await communicator.receive_nothing(timeout=0.8)
    finally:
        await communicator.disconnect()


async def test_a_burst_whose_last_event_was_lost_ends_in_a_snapshot_that_sets_the_page_right(
    alice, started_run, monkeypatch
):
    """Under a storm the layer may drop an event no later one repairs: once the events stop, the run as
    it is is compared with what the socket told the page."""
    monkeypatch.setattr(run_events, "RUN_RESYNC_SECONDS", 0.2)
    communicator = await connect_run(alice, started_run)
    try:
        await communicator.receive_json_from(timeout=TIMEOUT)

        def a_runs_then_ends_but_only_its_start_is_heard() -> None:
            rows = WorkNodeExecution.objects.filter(run=started_run, node_id="a")
            rows.update(status="running", started_at=timezone.now())
            run_event_emit(run_id=started_run.pk, event="nodes", nodes=[{"node_id": "a", "status": "running"}])
            rows.update(status="succeeded", finished_at=timezone.now())

        await sync_to_async(a_runs_then_ends_but_only_its_start_is_heard)()
        assert [e["event"] for e in await events_until(communicator, "nodes")] == ["nodes"]
        fresh = await communicator.receive_json_from(timeout=TIMEOUT)
    finally:
        await communicator.disconnect()
    assert fresh["type"] == "snapshot"
    assert {item["node_id"]: item["status"] for item in fresh["nodes"]}["a"] == "succeeded"
