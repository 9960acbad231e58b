"""The close codes, the sign-in check, and the base class the consumers build on."""

from __future__ import annotations

import time
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from graphs.reads.access import user_active

CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404

# How often an open socket checks that its user may still watch: a removed member or a deactivated
# user stops receiving within this long. Checking on every line would cost a query per line.
ACCESS_CHECK_SECONDS = 30.0


class LiveConsumer(AsyncJsonWebsocketConsumer):
    """What the consumers share: joining a group, handling the publisher's messages fast, and
    noticing that the user lost access."""

    _access_checked_at = 0.0
    _access_lost = False

    async def _visible(self, user: Any) -> bool:
        """Whether ``user`` may watch what this socket streams."""
        raise NotImplementedError

    async def _access_recheck(self) -> bool:
        """Return whether the user may still watch; when not, close the socket with CLOSE_NOT_FOUND.

        Queries at most once per ACCESS_CHECK_SECONDS (the first interval starts at connect);
        between checks, and after a loss, it answers from memory.
        """
        if self._access_lost or time.monotonic() - self._access_checked_at < ACCESS_CHECK_SECONDS:
            return not self._access_lost
        # Stamped before the queries, so a handler running meanwhile does not check again.
        self._access_checked_at = time.monotonic()
        user = self.scope["user"]
        if await _user_active(user.pk) and await self._visible(user):
            return True
        self._access_lost = True
        await self.close(code=CLOSE_NOT_FOUND)
        return False

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        """The sockets only send: a client's JSON frame is ignored, any other frame closes the socket (4400)."""
        try:
            await super().receive(text_data=text_data, bytes_data=bytes_data, **kwargs)
        except ValueError:  # not JSON, or not text at all
            await self.close(code=CLOSE_BAD_REQUEST)

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels closes stale database connections before every message, on a hop to the one
        # thread all database work of the process shares: every line to every socket would queue
        # there. Relaying touches no database (the few queries go through database_sync_to_async,
        # which does that cleanup itself), so layer messages skip it; socket events keep it.
        if message["type"].startswith("websocket."):
            await super().dispatch(message)
        else:
            await getattr(self, get_handler_name(message))(message)

    async def live_batch(self, message: dict[str, Any]) -> None:
        """Several messages the publisher packed into one (see ``graphs.logs.live``): handle each, in order."""
        for inner in message["messages"]:
            await getattr(self, get_handler_name(inner))(inner)

    async def _group_join(self, group: str) -> None:
        self.groups.append(group)  # websocket_disconnect leaves every group listed here
        await self.channel_layer.group_add(group, self.channel_name)


async def accept_signed_in(consumer: AsyncJsonWebsocketConsumer):
    """Accept the socket, then close it with CLOSE_UNAUTHENTICATED unless a user is signed in.

    Accepting first lets the browser read the close code (a refused handshake gives it none), so the
    client library can tell "sign in" from a network error and stop retrying.
    """
    await consumer.accept()
    user = consumer.scope.get("user")
    if user is None or not user.is_authenticated:
        await consumer.close(code=CLOSE_UNAUTHENTICATED)
        return None
    return user


async def _user_active(user_id: Any) -> bool:
    return await database_sync_to_async(user_active)(user_id=user_id)
