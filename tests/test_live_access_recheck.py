"""An open socket stops streaming once its user loses access: removed from the project, or deactivated."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from console.asgi import application
from console.consumers import CLOSE_NOT_FOUND, base, execution_log, run_events
from graphs.logs.events import run_event_emit
from graphs.logs.store import log_append, log_file_open
from graphs.models import ProjectMembership
from tests import factories
from tests.clients import socket_headers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

TIMEOUT = 3


@pytest.fixture
def execution(task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    log_append(execution=execution, event="agent_output", text="before")
    return execution


@pytest.fixture
def every_event_rechecks(monkeypatch):
    monkeypatch.setattr(base, "ACCESS_CHECK_SECONDS", 0)


@pytest.fixture
def quiet_sockets_recheck_quickly(monkeypatch):
    """No events at all: only the periodic check can notice, so it runs often and events never come."""
    monkeypatch.setattr(base, "ACCESS_CHECK_SECONDS", 0.1)
    monkeypatch.setattr(run_events, "RUN_RESYNC_SECONDS", 0.1)
    monkeypatch.setattr(execution_log, "POLL_SECONDS", 0.1)


@sync_to_async
def membership_remove(user) -> None:
    ProjectMembership.objects.filter(user=user).delete()


@sync_to_async
def user_deactivate(user) -> None:
    user.is_active = False
    user.save(update_fields=["is_active"])


async def connect(user, path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, path, headers=await socket_headers(user))
    assert (await communicator.connect(timeout=TIMEOUT))[0]
    await communicator.receive_json_from(timeout=TIMEOUT)  # the first line, or the run's snapshot
    return communicator


async def assert_closed_as_not_found(communicator: WebsocketCommunicator) -> None:
    closing = await communicator.receive_output(timeout=TIMEOUT)
    assert closing == {"type": "websocket.close", "code": CLOSE_NOT_FOUND}


@pytest.mark.usefixtures("every_event_rechecks")
async def test_a_log_line_after_alice_leaves_the_project_is_not_sent_and_the_socket_closes(alice, execution):
    communicator = await connect(alice, f"/ws/node-executions/{execution.pk}/log/")
    try:
        await membership_remove(alice)
        await sync_to_async(log_append)(execution=execution, event="agent_output", text="after")
        await assert_closed_as_not_found(communicator)
    finally:
        await communicator.disconnect()


@pytest.mark.usefixtures("every_event_rechecks")
async def test_a_run_event_after_bob_is_deactivated_is_not_sent_and_the_socket_closes(bob, execution):
    communicator = await connect(bob, f"/ws/runs/{execution.run_id}/")
    try:
        await user_deactivate(bob)
        await sync_to_async(run_event_emit)(run_id=execution.run_id, event="run_status", status="running")
        await assert_closed_as_not_found(communicator)
    finally:
        await communicator.disconnect()


@pytest.mark.usefixtures("quiet_sockets_recheck_quickly")
@pytest.mark.parametrize("path", ["/ws/node-executions/{execution.pk}/log/", "/ws/runs/{execution.run_id}/"])
async def test_a_quiet_socket_closes_within_the_check_interval_once_access_is_gone(alice, execution, path):
    communicator = await connect(alice, path.format(execution=execution))
    try:
        await membership_remove(alice)
        await assert_closed_as_not_found(communicator)
    finally:
        await communicator.disconnect()


@pytest.mark.usefixtures("quiet_sockets_recheck_quickly")
async def test_a_member_who_keeps_access_keeps_the_socket(alice, execution):
    communicator = await connect(alice, f"/ws/runs/{execution.run_id}/")
    try:
        assert await communicator.receive_nothing(timeout=0.5)
    finally:
        await communicator.disconnect()
