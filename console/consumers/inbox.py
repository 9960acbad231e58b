"""``InboxConsumer``: tells a page when its signed-in person's inbox count is no longer the one it shows."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from console.consumers.base import CLOSE_BAD_REQUEST, LiveConsumer, accept_signed_in
from graphs.logs.live import live_consumer_loop_register, project_inbox_group
from graphs.reads.access import projects_for_user
from graphs.reads.inbox import inbox_count

logger = logging.getLogger(__name__)

# How often the count is read when no event comes: what the layer cannot bring (another process of the
# embedded mode, a dropped message, a role changed) shows within this long.
INBOX_RESYNC_SECONDS = 3.0
# An event rarely comes alone (a run's status, then its nodes'): the count is read once the burst gathered…
GATHER_SECONDS = 0.1
# … and at most once this often while events keep coming, so a storm costs a query a second per socket.
MIN_CHECK_SECONDS = 1.0
# How often the projects followed are read again: one joined shows its events, one left stops sending them.
PROJECTS_CHECK_SECONDS = 30.0


class InboxConsumer(LiveConsumer):
    """``/ws/inbox/?count=<n>``: ``{"type": "changed"}`` whenever the person's inbox count is not ``n``, the
    count the page shows — and from then on, not the count it was last told of.

    The socket joins the inbox group of each project its user is a member of (membership decides, as
    for every socket), then reads the count: a page whose count moved between its render and the socket is
    told at once, as is one that gave no ``count``. An event in one of those groups (a run event that may
    change an inbox, ``graphs.reads.inbox_events``) has the count read again, once per burst and at most
    once every ``MIN_CHECK_SECONDS``; the count is also read every ``INBOX_RESYNC_SECONDS`` when no event
    comes. Each read is one query. The projects are read again every ``PROJECTS_CHECK_SECONDS``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._follow_task: asyncio.Task | None = None
        self._heard = asyncio.Event()
        self._told: int | None = None
        self._checked_at = float("-inf")
        self._projects_read_at = 0.0

    async def connect(self) -> None:
        user = await accept_signed_in(self)
        if user is None:
            return
        try:
            shown = _count_param(self.scope)
        except ValueError:
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        self._access_checked_at = time.monotonic()
        live_consumer_loop_register(asyncio.get_running_loop())
        # The groups are joined before the count is read, so no change falls between the two.
        await self._projects_follow()
        self._told = shown
        await self._count_check()
        self._follow_task = asyncio.create_task(self._follow())

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if self._follow_task is not None:
            self._follow_task.cancel()

    async def _visible(self, user: Any) -> bool:
        return True  # every signed-in person has an inbox, if only an empty one

    async def inbox_event(self, message: dict[str, Any]) -> None:
        self._heard.set()

    async def _follow(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._heard.wait(), timeout=INBOX_RESYNC_SECONDS)
            except TimeoutError:
                pass
            else:
                await asyncio.sleep(max(GATHER_SECONDS, self._checked_at + MIN_CHECK_SECONDS - time.monotonic()))
            self._heard.clear()
            try:
                if not await self._access_recheck():
                    return
                if time.monotonic() - self._projects_read_at >= PROJECTS_CHECK_SECONDS:
                    await self._projects_follow()
                await self._count_check()
            except Exception:
                logger.exception("checking the inbox of user %s failed", self.scope["user"].pk)

    async def _count_check(self) -> None:
        """Read the count; say ``changed`` when it is not the one the page was last known to show."""
        self._checked_at = time.monotonic()
        count = await database_sync_to_async(inbox_count)(self.scope["user"])
        if count != self._told:
            self._told = count
            await self.send_json({"type": "changed"})

    async def _projects_follow(self) -> None:
        """Be in the inbox group of each of the user's projects, and of no other."""
        self._projects_read_at = time.monotonic()
        projects = await database_sync_to_async(_project_ids)(self.scope["user"])
        wanted = {project_inbox_group(project_id) for project_id in projects}
        for group in [group for group in self.groups if group not in wanted]:
            self.groups.remove(group)
            await self.channel_layer.group_discard(group, self.channel_name)
        for group in sorted(wanted - set(self.groups)):
            await self._group_join(group)


def _project_ids(user: Any) -> list[Any]:
    return list(projects_for_user(user).values_list("pk", flat=True))


def _count_param(scope: dict[str, Any]) -> int | None:
    """``?count=`` as an int, or None when absent (the page's count is unknown); ValueError when it is not a
    non-negative integer."""
    values = parse_qs(scope.get("query_string", b"").decode("latin1")).get("count")
    if not values:
        return None
    count = int(values[0])
    if count < 0:
        raise ValueError(f"a count is never negative: {count}")
    return count
