"""The inbox socket: a signed-in person hears ``changed`` whenever their inbox count is not the one their page
shows — at once for a run event of one of their projects that changed it, at the next check for a change no
event announced — and nothing of projects they are not in; each check is one query."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from console.asgi import application
from console.consumers import CLOSE_BAD_REQUEST, CLOSE_UNAUTHENTICATED
from console.consumers import inbox as inbox_consumer
from graphs.logs.events import run_event_emit
from graphs.models import ProjectMembership, WorkGraphRun
from graphs.reads import inbox_events
from graphs.reads.inbox import inbox_event_may_change
from tests import factories
from tests.clients import ALLOWED_ORIGIN
from tests.inbox_socket import TIMEOUT, events_only, opened, reads_measured  # noqa: F401  (events_only: a fixture)
from tests.run_builders import node, planned_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

CHANGED = {"type": "changed"}


@pytest.fixture
def checks(monkeypatch, django_assert_max_num_queries):
    """Every count the sockets read, each measured: more than one query fails it (see ``failures``)."""
    return reads_measured(monkeypatch, django_assert_max_num_queries, "inbox_count", "counts")


@pytest.fixture
def other_project(db):
    """A project Alice is not in, led by Dora."""
    project = factories.ProjectFactory()
    factories.member(project, "dora", role="lead")
    return project


def plan_waiting(project) -> WorkGraphRun:
    """A run of a new task of ``project`` whose plan waits for approval, announced by no event."""
    task = factories.TaskFactory(project=project)
    return planned_run(task, {"nodes": [node("a")], "edges": []}, status="awaiting_approval")


@sync_to_async
def plan_waiting_announced(project) -> WorkGraphRun:
    """A plan comes to wait in ``project``, as the planner leaves it: the run's status event follows the commit."""
    run = plan_waiting(project)
    run_event_emit(run_id=run.pk, event="run_status", status="awaiting_approval")
    return run


async def connect(user, checks, query: str = "count=0") -> WebsocketCommunicator:
    """The socket open, its groups joined: it has read the count once."""
    read_before = len(checks["counts"])
    communicator = await opened(user, query)
    await checks_reach(checks, read_before + 1)
    return communicator


async def close_code(communicator: WebsocketCommunicator) -> int:
    closing = await communicator.receive_output(timeout=TIMEOUT)
    assert closing["type"] == "websocket.close", closing
    return closing["code"]


async def checks_reach(checks, number: int) -> None:
    async with asyncio.timeout(TIMEOUT):
        while len(checks["counts"]) < number:
            await asyncio.sleep(0.02)


@pytest.mark.usefixtures("events_only")
async def test_a_plan_coming_to_wait_in_any_of_alices_projects_is_said_at_once(alice, project, checks):
    second = await sync_to_async(factories.ProjectFactory)()
    await sync_to_async(ProjectMembership.objects.create)(user=alice, project=second, role="reviewer")
    communicator = await connect(alice, checks)
    try:
        assert await communicator.receive_nothing(timeout=0.3), "the page's count was right"
        await plan_waiting_announced(project)
        assert await communicator.receive_json_from(timeout=TIMEOUT) == CHANGED
        await plan_waiting_announced(second)
        assert await communicator.receive_json_from(timeout=TIMEOUT) == CHANGED
    finally:
        await communicator.disconnect()
    assert checks["counts"] == [0, 1, 2]


@pytest.mark.usefixtures("events_only")
async def test_nothing_is_read_or_said_for_a_project_alice_is_not_in(alice, project, other_project, checks):
    communicator = await connect(alice, checks)
    try:
        await plan_waiting_announced(other_project)
        assert await communicator.receive_nothing(timeout=1.5)
    finally:
        await communicator.disconnect()
    assert checks["counts"] == [0], "the socket read the count again for an event it should not have heard"


@pytest.mark.usefixtures("events_only")
async def test_a_burst_of_events_has_the_count_read_once(alice, task, checks):
    run = await sync_to_async(plan_waiting)(task.project)
    communicator = await connect(alice, checks, "count=1")
    try:

        def burst() -> None:
            for status in ("succeeded", "failed", "running"):
                run_event_emit(run_id=run.pk, event="nodes", nodes=[{"node_id": "a", "status": status}])
            run_event_emit(run_id=run.pk, event="run_status", status="awaiting_approval")

        await sync_to_async(burst)()
        await checks_reach(checks, 2)
        assert await communicator.receive_nothing(timeout=1.5), "the count did not change: nothing to say"
    finally:
        await communicator.disconnect()
    assert checks["counts"] == [1, 1]


async def test_a_change_no_event_announced_is_said_at_the_next_check(alice, task, checks, monkeypatch):
    """As when another process of the embedded mode planned it: its events cannot reach this one."""
    monkeypatch.setattr(inbox_consumer, "INBOX_RESYNC_SECONDS", 0.1)
    monkeypatch.setattr(inbox_consumer, "MIN_CHECK_SECONDS", 0)  # a check as often as the resync asks
    communicator = await connect(alice, checks)
    try:
        assert await communicator.receive_nothing(timeout=0.3)
        await sync_to_async(plan_waiting)(task.project)
        assert await communicator.receive_json_from(timeout=TIMEOUT) == CHANGED
        assert await communicator.receive_nothing(timeout=0.3), "said once, not at every check"
    finally:
        await communicator.disconnect()
    assert not checks["failures"]


async def test_each_check_is_one_query_whatever_waits_in_how_many_projects(alice, task, checks, monkeypatch):
    monkeypatch.setattr(inbox_consumer, "INBOX_RESYNC_SECONDS", 0.05)
    monkeypatch.setattr(inbox_consumer, "MIN_CHECK_SECONDS", 0)  # a check as often as the resync asks

    def everywhere() -> None:
        for _ in range(3):
            project = factories.ProjectFactory()
            ProjectMembership.objects.create(user=alice, project=project, role="lead")
            plan_waiting(project)
            run = planned_run(factories.TaskFactory(project=project), {"nodes": [node("a")], "edges": []},
                              status="failed")
            WorkGraphRun.objects.filter(pk=run.pk).update(error_code=WorkGraphRun.StopCode.BUDGET_EXCEEDED)

    await sync_to_async(everywhere)()
    communicator = await connect(alice, checks, "count=6")
    try:
        await checks_reach(checks, 4)
        assert await communicator.receive_nothing(timeout=0.1)
    finally:
        await communicator.disconnect()
    assert not checks["failures"], checks["failures"]
    assert set(checks["counts"]) == {6}


async def test_a_project_joined_while_connected_is_followed_and_one_left_is_not(
    alice, project, other_project, checks, monkeypatch
):
    # No check but those an event wakes: each reads her projects again, then the count.
    monkeypatch.setattr(inbox_consumer, "INBOX_RESYNC_SECONDS", 3600)
    monkeypatch.setattr(inbox_consumer, "MIN_CHECK_SECONDS", 0)
    monkeypatch.setattr(inbox_consumer, "PROJECTS_CHECK_SECONDS", 0)
    read = []
    project_ids = inbox_consumer._project_ids

    def recorded(user):
        read.append(project_ids(user))
        return read[-1]

    monkeypatch.setattr(inbox_consumer, "_project_ids", recorded)
    communicator = await connect(alice, checks)
    try:
        await sync_to_async(ProjectMembership.objects.filter(user=alice).delete)()
        await sync_to_async(ProjectMembership.objects.create)(user=alice, project=other_project, role="reviewer")
        counted = len(checks["counts"])
        # An event of the project she is leaving, heard while she still follows it, wakes a check.
        await plan_waiting_announced(project)
        await checks_reach(checks, counted + 1)
        assert read[-1] == [other_project.pk]
        before = len(checks["counts"])

        await plan_waiting_announced(project)
        assert await communicator.receive_nothing(timeout=1.5)
        assert len(checks["counts"]) == before, "an event of the project she left was heard"
        await plan_waiting_announced(other_project)
        assert await communicator.receive_json_from(timeout=TIMEOUT) == CHANGED
    finally:
        await communicator.disconnect()


async def test_a_page_whose_count_is_not_the_servers_is_told_on_connect(alice, task, checks):
    await sync_to_async(plan_waiting)(task.project)
    for query, told in (("count=0", [CHANGED]), ("", [CHANGED]), ("count=1", [])):
        communicator = await connect(alice, checks, query)
        try:
            said = [await communicator.receive_json_from(timeout=TIMEOUT) for _ in told]
            assert await communicator.receive_nothing(timeout=0.2)
        finally:
            await communicator.disconnect()
        assert said == told, query


async def test_a_visitor_is_refused_and_so_is_a_count_that_is_not_one(alice):
    visitor = WebsocketCommunicator(application, "/ws/inbox/?count=0", headers=[ALLOWED_ORIGIN])
    assert (await visitor.connect(timeout=TIMEOUT))[0]
    try:
        assert await close_code(visitor) == CLOSE_UNAUTHENTICATED
    finally:
        await visitor.disconnect()
    for query in ("count=-1", "count=two", "count=1.5"):
        communicator = await opened(alice, query)
        try:
            assert await close_code(communicator) == CLOSE_BAD_REQUEST, query
        finally:
            await communicator.disconnect()


def test_which_run_events_may_change_an_inbox():
    assert inbox_event_may_change({"event": "run_status", "status": "ready"})
    assert inbox_event_may_change({"event": "nodes", "nodes": [{"status": "queued"}, {"status": "succeeded"}]})
    assert inbox_event_may_change({"event": "nodes", "nodes": [{"status": "running"}]})
    assert not inbox_event_may_change({"event": "nodes", "nodes": [{"status": "pending"}, {"status": "queued"}]})
    for event in ("log", "progress", "nodes_appended", "run_stopping"):
        assert not inbox_event_may_change({"event": event, "status": "running"}), event


def test_a_runs_project_is_asked_of_the_database_once(task, django_assert_num_queries):
    run = factories.RunFactory(task=task)
    event = {"event": "run_status", "run_id": str(run.pk), "status": "awaiting_approval"}
    with django_assert_num_queries(1):
        inbox_events.inbox_event_publish(event)
    with django_assert_num_queries(0):
        inbox_events.inbox_event_publish(event)
        inbox_events.inbox_event_publish({**event, "event": "log"})
    inbox_events.inbox_event_publish({**event, "run_id": "00000000-0000-0000-0000-000000000000"})
