"""Who may open a live socket: members of the execution's or run's project, from an allowed Origin."""

from __future__ import annotations

import uuid

import pytest
from channels.testing import WebsocketCommunicator

from console.asgi import application
from console.consumers import CLOSE_BAD_REQUEST, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED
from console.routing import UnknownPathConsumer, websocket_urlpatterns
from graphs.logs.store import log_append, log_file_open
from tests import factories
from tests.clients import ALLOWED_ORIGIN, socket_headers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

TIMEOUT = 3



@pytest.fixture
def execution(task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    log_append(execution=execution, event="agent_output", text="a secret")
    return execution


def log_path(execution_id) -> str:
    return f"/ws/node-executions/{execution_id}/log/"


def run_path(run_id) -> str:
    return f"/ws/runs/{run_id}/"


async def close_code_for(path: str, headers: list[tuple[bytes, bytes]]) -> int:
    """Connect, expect the socket to be accepted and then closed at once, and return the close code."""
    communicator = WebsocketCommunicator(application, path, headers=headers)
    try:
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert connected
        closing = await communicator.receive_output(timeout=TIMEOUT)
        assert closing["type"] == "websocket.close", closing
        return closing["code"]
    finally:
        await communicator.disconnect()


async def test_alice_who_leads_the_project_may_watch_the_log(alice, execution):
    communicator = WebsocketCommunicator(
        application, log_path(execution.pk), headers=await socket_headers(alice)
    )
    try:
        assert (await communicator.connect(timeout=TIMEOUT))[0]
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert message["line"]["text"] == "a secret"
    finally:
        await communicator.disconnect()


async def test_bob_who_reviews_the_project_may_watch_the_run(bob, execution):
    communicator = WebsocketCommunicator(
        application, run_path(execution.run_id), headers=await socket_headers(bob)
    )
    try:
        assert (await communicator.connect(timeout=TIMEOUT))[0]
        assert (await communicator.receive_json_from(timeout=TIMEOUT))["type"] == "snapshot"
    finally:
        await communicator.disconnect()


@pytest.mark.parametrize("path_for", [log_path, run_path])
async def test_an_anonymous_visitor_is_told_to_sign_in(execution, path_for):
    target = execution.pk if path_for is log_path else execution.run_id
    assert await close_code_for(path_for(target), [ALLOWED_ORIGIN]) == CLOSE_UNAUTHENTICATED


@pytest.mark.parametrize("path_for", [log_path, run_path])
async def test_charlie_who_is_no_member_gets_the_same_answer_as_for_an_unknown_id(charlie, execution, path_for):
    target = execution.pk if path_for is log_path else execution.run_id
    headers = await socket_headers(charlie)
    assert await close_code_for(path_for(target), headers) == CLOSE_NOT_FOUND
    assert await close_code_for(path_for(uuid.uuid4()), headers) == CLOSE_NOT_FOUND


async def test_dana_the_skill_admin_sees_no_project_logs(dana, execution):
    headers = await socket_headers(dana)
    assert await close_code_for(log_path(execution.pk), headers) == CLOSE_NOT_FOUND


async def test_a_malformed_after_is_refused(alice, execution):
    headers = await socket_headers(alice)
    assert await close_code_for(log_path(execution.pk) + "?after=-1", headers) == CLOSE_BAD_REQUEST
    assert await close_code_for(log_path(execution.pk) + "?after=two", headers) == CLOSE_BAD_REQUEST


@pytest.mark.parametrize("origin", [b"http://evil.example", None])
async def test_a_page_of_another_site_cannot_open_a_socket_with_alices_cookie(alice, execution, origin):
    headers = [(await socket_headers(alice))[1]] + ([(b"origin", origin)] if origin else [])
    communicator = WebsocketCommunicator(application, log_path(execution.pk), headers=headers)
    try:
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert not connected
    finally:
        await communicator.disconnect()


# Every WebSocket route as every persona. A new route without an entry fails the coverage test.
WS_ROUTES = {
    "ws/node-executions/<uuid:node_exec_id>/log/": lambda execution: log_path(execution.pk),
    "ws/runs/<uuid:run_id>/": lambda execution: run_path(execution.run_id),
    "ws/inbox/": lambda execution: "/ws/inbox/",
}
WS_EXPECTED = {"alice": "open", "bob": "open", "charlie": CLOSE_NOT_FOUND, "dana": CLOSE_NOT_FOUND,
               "anonymous": CLOSE_UNAUTHENTICATED}
# A person's own inbox is theirs whatever projects they are in: only a visitor is refused.
WS_EXPECTED_BY_ROUTE = {"ws/inbox/": {**WS_EXPECTED, "charlie": "open", "dana": "open"}}


def test_the_table_covers_every_websocket_route():
    served = {str(pattern.pattern) for pattern in websocket_urlpatterns
              if pattern.callback.consumer_class is not UnknownPathConsumer}
    assert served == set(WS_ROUTES)


@pytest.mark.parametrize("persona", sorted(WS_EXPECTED))
@pytest.mark.parametrize("route", sorted(WS_ROUTES))
async def test_each_persona_gets_the_expected_answer_on_every_socket(
    route, persona, alice, bob, charlie, dana, execution
):
    users = {"alice": alice, "bob": bob, "charlie": charlie, "dana": dana}
    headers = await socket_headers(users[persona]) if persona in users else [ALLOWED_ORIGIN]
    path = WS_ROUTES[route](execution)
    expected = WS_EXPECTED_BY_ROUTE.get(route, WS_EXPECTED)[persona]
    if expected != "open":
        assert await close_code_for(path, headers) == expected
        return
    communicator = WebsocketCommunicator(application, path, headers=headers)
    try:
        assert (await communicator.connect(timeout=TIMEOUT))[0]
        first = await communicator.receive_json_from(timeout=TIMEOUT)
        # The inbox socket, told no count the page shows, says at once that the page should read it.
        assert first["type"] in {"line", "snapshot", "changed"}
    finally:
        await communicator.disconnect()
