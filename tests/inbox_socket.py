"""What the inbox socket's tests share: the socket opened as a signed-in person's page opens it, each read
the socket makes measured, and no periodic check within a test."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator

from console.asgi import application
from console.consumers import inbox as inbox_consumer
from tests.clients import socket_headers

TIMEOUT = 3


@pytest.fixture
def events_only(monkeypatch):
    """No periodic check within a test: only an event can have the socket read or say anything."""
    monkeypatch.setattr(inbox_consumer, "INBOX_RESYNC_SECONDS", 60)


def reads_measured(monkeypatch, assert_max_num_queries: Callable[..., Any], name: str,
                   kept_as: str) -> dict[str, list]:
    """Every call the socket makes of its read ``name``, each measured: more than one query fails it (kept in
    ``failures``); what each returned is kept, in order, in ``kept_as``."""
    read = getattr(inbox_consumer, name)
    kept: dict[str, list] = {kept_as: [], "failures": []}

    def measured(*args, **kwargs):
        try:
            with assert_max_num_queries(1):
                value = read(*args, **kwargs)
        except BaseException as failure:
            kept["failures"].append(failure)
            raise
        kept[kept_as].append(value)
        return value

    monkeypatch.setattr(inbox_consumer, name, measured)
    return kept


async def opened(user, query: str) -> WebsocketCommunicator:
    """``/ws/inbox/?<query>`` connected as ``user``'s page connects it."""
    communicator = WebsocketCommunicator(application, f"/ws/inbox/?{query}", headers=await socket_headers(user))
    assert (await communicator.connect(timeout=TIMEOUT))[0]
    return communicator
