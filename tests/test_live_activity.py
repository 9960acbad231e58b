"""The list pages follow the runs of a person's projects over the inbox socket: a page that gives the fingerprint
of the runs it was rendered with hears ``activity`` for each run event of one of those projects that a list
shows (a run's status, progress, nodes' statuses; never a log line) — once per burst, at most once a second —
and for a change no event announced, found by the fingerprint it reads when it checks; nothing of projects the
person is not in, and nothing at all on a page that follows no list. The fingerprint is one query."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from console.consumers import CLOSE_BAD_REQUEST
from console.consumers import inbox as inbox_consumer
from graphs.logs.events import run_event_emit
from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.reads.inbox import inbox_event_may_change
from graphs.reads.inbox_events import list_event_may_change
from graphs.reads.live import runs_fingerprint_read
from tests import factories
from tests.clients import signed_in
from tests.inbox_socket import TIMEOUT, events_only, opened, reads_measured  # noqa: F401  (events_only: a fixture)
from tests.run_builders import node, planned_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

ACTIVITY = {"type": "activity"}
CHANGED = {"type": "changed"}


@pytest.fixture
def reads(monkeypatch, django_assert_max_num_queries):
    """Every fingerprint the sockets read, each measured: more than one query fails it (see ``failures``)."""
    return reads_measured(monkeypatch, django_assert_max_num_queries, "runs_fingerprint_read", "fingerprints")


@pytest.fixture
def run(task):
    """A run of Alice's project under way: its plan ready, its node ``a`` queued."""
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    WorkNodeExecution.objects.create(run=run, node_id="a", subagent_type="planner", attempt=1, status="queued")
    return run


@sync_to_async
def emitted(run: WorkGraphRun, event: str, **data) -> None:
    """``event`` of ``run``, as the engine announces it: after its commit."""
    run_event_emit(run_id=run.pk, event=event, **data)


async def following(user, reads) -> WebsocketCommunicator:
    """A list page's socket, the page rendered just now: it has read the fingerprint once and said nothing."""
    fingerprint = await sync_to_async(runs_fingerprint_read)(user=user)
    communicator = await opened(user, f"count=0&activity={fingerprint}")
    async with asyncio.timeout(TIMEOUT):
        while not reads["fingerprints"]:
            await asyncio.sleep(0.02)
    return communicator


async def said(communicator: WebsocketCommunicator, *, within: float) -> list[dict]:
    """Everything the socket says within ``within`` seconds (a receive that times out would end the socket)."""
    await asyncio.sleep(within)
    messages = []
    while not await communicator.receive_nothing(timeout=0.01):
        messages.append(await communicator.receive_json_from())
    return messages


@pytest.mark.usefixtures("events_only")
async def test_each_event_a_list_shows_is_told_as_activity_and_a_log_line_is_not(alice, run, reads):
    communicator = await following(alice, reads)
    try:
        assert await communicator.receive_nothing(timeout=0.3), "the page's lists were right"
        await emitted(run, "progress", done=0, total=1)
        assert await communicator.receive_json_from(timeout=TIMEOUT) == ACTIVITY
        await asyncio.sleep(inbox_consumer.MIN_CHECK_SECONDS)
        await emitted(run, "nodes", nodes=[{"node_id": "a", "status": "running"}])
        assert await communicator.receive_json_from(timeout=TIMEOUT) == ACTIVITY
        await asyncio.sleep(inbox_consumer.MIN_CHECK_SECONDS)
        await emitted(run, "log", node_id="a", seq=1)
        assert await said(communicator, within=1.5) == [], "a log line changes no list"
    finally:
        await communicator.disconnect()
    assert not reads["failures"], reads["failures"]


@pytest.mark.usefixtures("events_only")
async def test_nothing_is_told_of_a_project_alice_is_not_in(alice, run, reads):
    elsewhere = await sync_to_async(lambda: planned_run(factories.TaskFactory(), {"nodes": [node("a")], "edges": []}))()
    communicator = await following(alice, reads)
    try:
        await emitted(elsewhere, "run_status", status="running")
        await emitted(elsewhere, "progress", done=1, total=1)
        assert await communicator.receive_nothing(timeout=1.5)
    finally:
        await communicator.disconnect()
    assert len(reads["fingerprints"]) == 1, "the socket read the fingerprint again for events it should not hear"


@pytest.mark.usefixtures("events_only")
async def test_a_storm_of_events_is_told_once_a_burst_and_at_most_once_a_second(alice, run, reads):
    communicator = await following(alice, reads)
    try:
        for _ in range(20):
            await emitted(run, "progress", done=0, total=1)
        # The first is told a second after the socket's first check at the latest, then nothing more.
        assert await said(communicator, within=1.5) == [ACTIVITY], "a burst is told once"

        told_at = []

        async def listen() -> None:
            while True:
                assert await communicator.receive_json_from(timeout=TIMEOUT) == ACTIVITY
                told_at.append(time.monotonic())

        listener = asyncio.create_task(listen())
        started = time.monotonic()
        while time.monotonic() - started < 3.2:
            await emitted(run, "nodes", nodes=[{"node_id": "a", "status": "queued"}])
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.2)
        listener.cancel()
    finally:
        await communicator.disconnect()
    gaps = [later - earlier for earlier, later in itertools.pairwise(told_at)]
    assert 3 <= len(told_at) <= 5, told_at
    assert min(gaps) > inbox_consumer.MIN_CHECK_SECONDS * 0.9, gaps
    assert not reads["failures"], reads["failures"]


async def test_a_run_moved_where_no_event_reaches_is_told_at_the_next_check(alice, task, reads, monkeypatch):
    """As when another process of the embedded mode moved it: its events cannot reach this one."""
    monkeypatch.setattr(inbox_consumer, "INBOX_RESYNC_SECONDS", 0.1)
    monkeypatch.setattr(inbox_consumer, "MIN_CHECK_SECONDS", 0)
    communicator = await following(alice, reads)
    try:
        assert await communicator.receive_nothing(timeout=0.3), "nothing moved"
        run = await sync_to_async(planned_run)(task, {"nodes": [node("a")], "edges": []}, status="planning")
        assert await communicator.receive_json_from(timeout=TIMEOUT) == ACTIVITY
        assert await communicator.receive_nothing(timeout=0.3), "told once, not at every check"

        await sync_to_async(WorkGraphRun.objects.filter(pk=run.pk).update)(status="running")
        assert await communicator.receive_json_from(timeout=TIMEOUT) == ACTIVITY
        await sync_to_async(WorkNodeExecution.objects.create)(
            run=run, node_id="a", subagent_type="planner", attempt=1, status="running", started_at=timezone.now())
        assert await communicator.receive_json_from(timeout=TIMEOUT) == ACTIVITY
        await sync_to_async(WorkGraphRun.objects.filter(pk=run.pk).update)(status="succeeded",
                                                                            finished_at=timezone.now())
        assert await communicator.receive_json_from(timeout=TIMEOUT) == ACTIVITY
        assert await communicator.receive_nothing(timeout=0.3)
    finally:
        await communicator.disconnect()
    assert len(reads["fingerprints"]) > 5, "the socket checked again and again"
    assert not reads["failures"], reads["failures"]


async def test_a_page_rendered_before_a_run_moved_is_told_on_connect(alice, run, reads):
    rendered = await sync_to_async(runs_fingerprint_read)(user=alice)
    await sync_to_async(WorkNodeExecution.objects.filter(run=run).update)(status="running", started_at=timezone.now())
    stale = await opened(alice, f"count=0&activity={rendered}")
    try:
        assert await said(stale, within=0.5) == [ACTIVITY]
    finally:
        await stale.disconnect()
    current = await sync_to_async(runs_fingerprint_read)(user=alice)
    fresh = await opened(alice, f"count=0&activity={current}")
    try:
        assert await fresh.receive_nothing(timeout=0.5)
    finally:
        await fresh.disconnect()


@pytest.mark.usefixtures("events_only")
async def test_a_page_that_follows_no_list_hears_no_activity_and_costs_no_fingerprint(alice, run, reads, monkeypatch):
    monkeypatch.setattr(inbox_consumer, "INBOX_RESYNC_SECONDS", 0.1)
    monkeypatch.setattr(inbox_consumer, "MIN_CHECK_SECONDS", 0)
    communicator = await opened(alice, "count=0")
    try:
        await emitted(run, "progress", done=0, total=1)
        await sync_to_async(WorkGraphRun.objects.filter(pk=run.pk).update)(status="succeeded")
        assert await communicator.receive_nothing(timeout=1.0)
    finally:
        await communicator.disconnect()
    assert reads["fingerprints"] == []


async def test_an_activity_that_is_no_fingerprint_is_refused(alice):
    for query in ("count=0&activity=", "activity=XYZ", "activity=" + "a" * 65, "count=0&activity=12%2034"):
        communicator = await opened(alice, query)
        try:
            if query == "count=0&activity=":  # an empty value is no value: the page follows no list
                assert await communicator.receive_nothing(timeout=0.2)
                continue
            closing = await communicator.receive_output(timeout=TIMEOUT)
            assert (closing["type"], closing.get("code")) == ("websocket.close", CLOSE_BAD_REQUEST), query
        finally:
            await communicator.disconnect()


def test_the_fingerprint_moves_with_every_run_of_her_projects_and_is_one_query(alice, task, django_assert_num_queries):
    def fingerprint() -> str:
        with django_assert_num_queries(1):
            return runs_fingerprint_read(user=alice)

    for _ in range(3):
        run_under_way = planned_run(factories.TaskFactory(project=task.project), {"nodes": [node("a")], "edges": []},
                                    status="running")
        for node_id in ("a", "b", "c"):
            WorkNodeExecution.objects.create(run=run_under_way, node_id=node_id, subagent_type="planner", attempt=1)
    seen = [fingerprint()]

    def moved(change) -> None:
        change()
        seen.append(fingerprint())
        assert seen[-1] != seen[-2], f"the fingerprint did not move: {change.__doc__}"

    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="planning")
    seen.append(fingerprint())
    assert seen[-1] != seen[-2], "a new run"
    rows = WorkGraphRun.objects.filter(pk=run.pk)
    attempt = WorkNodeExecution.objects.create(run=run, node_id="a", subagent_type="planner", attempt=1)
    attempts = WorkNodeExecution.objects.filter(pk=attempt.pk)
    seen.append(fingerprint())
    assert seen[-1] != seen[-2], "a new attempt"
    for doc, change in (
        ("planned", lambda: rows.update(status="ready")),
        ("started", lambda: rows.update(status="running", started_at=timezone.now())),
        ("its attempt queued", lambda: attempts.update(status="queued", ready_at=timezone.now())),
        ("its attempt running", lambda: attempts.update(status="running", started_at=timezone.now())),
        ("its attempt waiting for a reviewer", lambda: attempts.update(status="awaiting_review")),
        ("its attempt succeeded", lambda: attempts.update(status="succeeded")),
        ("waiting for approval", lambda: rows.update(status="awaiting_approval")),
        ("ended", lambda: rows.update(status="succeeded", finished_at=timezone.now())),
        ("resumed", lambda: rows.update(status="running")),
    ):
        change.__doc__ = doc
        moved(change)

    before = fingerprint()
    elsewhere = planned_run(factories.TaskFactory(), {"nodes": [node("a")], "edges": []}, status="running")
    WorkNodeExecution.objects.create(run=elsewhere, node_id="a", subagent_type="planner", attempt=1)
    assert fingerprint() == before, "a run of a project she is not in"


def test_the_pages_that_follow_lists_carry_the_fingerprint_they_were_rendered_with(alice, run):
    client = signed_in(alice)
    fingerprint = runs_fingerprint_read(user=alice)
    for url, region in (("/tasks/?status=running", "task-rows"), ("/runs/", "run-rows"), ("/", "in-flight"),
                        ("/inbox/", "inbox-items"), (f"/projects/{run.task.project.slug}/", "project-tasks")):
        page = client.get(url).content.decode()
        assert f'id="{region}" data-live-region data-activity="{fingerprint}"' in page, url
    # The task page hears of a run made elsewhere, which no run socket of it can tell.
    page = client.get(f"/tasks/{run.task_id}/").content.decode()
    assert f'<div id="runs" data-activity="{fingerprint}"' in page
    page = client.get(f"/runs/{run.run_id}/").content.decode()
    assert "data-activity" not in page, "a page that follows no list"


def test_which_run_events_may_change_a_list():
    for event in ("run_status", "progress", "nodes", "nodes_appended"):
        assert list_event_may_change({"event": event}), event
    for event in ("log", "run_stopping"):
        assert not list_event_may_change({"event": event}), event
    inbox_events = [{"event": "run_status", "status": "ready"}, {"event": "nodes", "nodes": [{"status": "running"}]}]
    assert all(inbox_event_may_change(event) and list_event_may_change(event) for event in inbox_events)
