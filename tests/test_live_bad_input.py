"""A socket on an unknown path, or a client frame the console cannot read, closes cleanly."""

from __future__ import annotations

import logging

import pytest
from channels.testing import WebsocketCommunicator

from console.asgi import application
from console.consumers import CLOSE_BAD_REQUEST, CLOSE_NOT_FOUND
from tests import factories
from tests.clients import socket_headers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

TIMEOUT = 3


@pytest.fixture
def run(task):
    return factories.RunFactory(task=task)


def assert_no_traceback(caplog) -> None:
    assert [record for record in caplog.records if record.levelno >= logging.ERROR or record.exc_info] == []


async def test_an_unknown_path_is_closed_as_not_found(alice, caplog):
    communicator = WebsocketCommunicator(application, "/ws/no-such-thing/", headers=await socket_headers(alice))
    try:
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert connected
        assert await communicator.receive_output(timeout=TIMEOUT) == {"type": "websocket.close",
                                                                      "code": CLOSE_NOT_FOUND}
    finally:
        await communicator.disconnect()
    assert_no_traceback(caplog)


@pytest.mark.parametrize("frame", [{"text": "not json {"}, {"bytes": b"\x00\x01"}])
async def test_a_frame_that_is_not_json_text_closes_the_socket_as_a_bad_request(alice, run, caplog, frame):
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=await socket_headers(alice))
    try:
        assert (await communicator.connect(timeout=TIMEOUT))[0]
        assert (await communicator.receive_json_from(timeout=TIMEOUT))["type"] == "snapshot"
        await communicator.send_input({"type": "websocket.receive", **frame})
        assert await communicator.receive_output(timeout=TIMEOUT) == {"type": "websocket.close",
                                                                      "code": CLOSE_BAD_REQUEST}
    finally:
        await communicator.disconnect()
    assert_no_traceback(caplog)


async def test_a_json_frame_is_ignored(alice, run):
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=await socket_headers(alice))
    try:
        assert (await communicator.connect(timeout=TIMEOUT))[0]
        await communicator.receive_json_from(timeout=TIMEOUT)
        await communicator.send_json_to({"type": "hello"})
        assert await communicator.receive_nothing(timeout=0.3)
    finally:
        await communicator.disconnect()
