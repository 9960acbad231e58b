"""``InboxConsumer``: tells a page when its signed-in person's inbox count is no longer the one it shows, and
when something moved in one of their projects that a list page shows."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from console.consumers.base import CLOSE_BAD_REQUEST, LiveConsumer, accept_signed_in
from graphs.logs.live import live_consumer_loop_register, project_inbox_group
from graphs.reads.access import projects_for_user
from graphs.reads.inbox import inbox_count
from graphs.reads.live import runs_fingerprint_read

logger = logging.getLogger(__name__)

# How often the count and the runs' fingerprint are read whatever events come: what the layer cannot bring
# (another process of the embedded mode, a dropped message, a role changed) shows within this long.
INBOX_RESYNC_SECONDS = 3.0
# An event rarely comes alone (a run's status, then its nodes'): the socket acts once the burst gathered…
GATHER_SECONDS = 0.1
# … and at most once this often while events keep coming, so a storm costs a query or two and one
# ``activity`` a second per socket.
MIN_CHECK_SECONDS = 1.0
# How often the projects followed are read again: one joined shows its events, one left stops sending them.
PROJECTS_CHECK_SECONDS = 30.0
# What ``runs_fingerprint_read`` answers, as a page gives it back in ``activity``.
_FINGERPRINT = re.compile(r"[0-9a-f]{1,64}")


class InboxConsumer(LiveConsumer):
    """``/ws/inbox/?count=<n>&activity=<fingerprint>``: ``{"type": "changed"}`` whenever the person's inbox
    count is not ``n``, the count the page shows — and from then on, not the count it was last told of;
    ``{"type": "activity"}`` whenever a run of their projects moved in a way a list page shows.

    The socket joins the inbox group of each project its user is a member of (membership decides, as
    for every socket), then reads the count: a page whose count moved between its render and the socket is
    told at once, as is one that gave no ``count``. A page that follows lists gives the fingerprint of the
    user's runs it was rendered with (``graphs.reads.live.runs_fingerprint_read``), and hears ``activity``
    at once when it is not the server's; a page that gives none follows no list, and is never told of
    activity nor costs a fingerprint read. An event in one of those groups (``graphs.reads.inbox_events``:
    a run's status, progress or nodes moved) is told as ``activity``, and one that may change an inbox has
    the count read again — once per burst and at most once every ``MIN_CHECK_SECONDS``. Every
    ``INBOX_RESYNC_SECONDS`` the count and the fingerprint are read again whatever came, and a fingerprint
    that moved is told as ``activity`` too, within the same limit. Each read is one query; the fingerprint
    is read again as each ``activity`` is told, so the next check compares with what the page fetched
    after it. The projects are read again every ``PROJECTS_CHECK_SECONDS``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._follow_task: asyncio.Task | None = None
        self._heard = asyncio.Event()
        self._inbox_heard = False
        self._activity_heard = False
        self._told: int | None = None
        self._fingerprint: str | None = None
        self._checked_at = float("-inf")
        self._resynced_at = 0.0
        self._projects_read_at = 0.0

    async def connect(self) -> None:
        user = await accept_signed_in(self)
        if user is None:
            return
        try:
            shown = _count_param(self.scope)
            fingerprint = _activity_param(self.scope)
        except ValueError:
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        self._access_checked_at = time.monotonic()
        live_consumer_loop_register(asyncio.get_running_loop())
        # The groups are joined before the count and the fingerprint are read, so no change falls between.
        await self._projects_follow()
        self._told, self._fingerprint = shown, fingerprint
        self._resynced_at = time.monotonic()
        await self._count_check()
        await self._fingerprint_check()
        self._checked_at = time.monotonic()
        self._follow_task = asyncio.create_task(self._follow())

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if self._follow_task is not None:
            self._follow_task.cancel()

    async def _visible(self, user: Any) -> bool:
        return True  # every signed-in person has an inbox, if only an empty one

    async def project_event(self, message: dict[str, Any]) -> None:
        if message.get("inbox"):
            self._inbox_heard = True
        if self._fingerprint is not None:  # a page that follows no list has nothing to hear of the rest
            self._activity_heard = True
        if self._inbox_heard or self._activity_heard:
            self._heard.set()

    async def _follow(self) -> None:
        while True:
            due = self._resynced_at + INBOX_RESYNC_SECONDS - time.monotonic()
            try:
                await asyncio.wait_for(self._heard.wait(), timeout=max(due, 0))
            except TimeoutError:
                gather, resync = 0.0, True
            else:
                gather, resync = GATHER_SECONDS, False
            await asyncio.sleep(max(gather, self._checked_at + MIN_CHECK_SECONDS - time.monotonic()))
            self._heard.clear()
            inbox, self._inbox_heard = self._inbox_heard, False
            activity, self._activity_heard = self._activity_heard, False
            try:
                if not await self._access_recheck():
                    return
                if time.monotonic() - self._projects_read_at >= PROJECTS_CHECK_SECONDS:
                    await self._projects_follow()
                resync = resync or time.monotonic() - self._resynced_at >= INBOX_RESYNC_SECONDS
                if resync:
                    self._resynced_at = time.monotonic()
                if inbox or resync:
                    await self._count_check()
                if activity:
                    await self._activity_tell()
                elif resync:
                    await self._fingerprint_check()
            except Exception:
                logger.exception("checking the inbox of user %s failed", self.scope["user"].pk)
            # Stamped once what it said is sent: the next check waits its turn from then, however long reads took.
            self._checked_at = time.monotonic()

    async def _count_check(self) -> None:
        """Read the count; say ``changed`` when it is not the one the page was last known to show."""
        count = await database_sync_to_async(inbox_count)(self.scope["user"])
        if count != self._told:
            self._told = count
            await self.send_json({"type": "changed"})

    async def _fingerprint_check(self) -> None:
        """For a page that follows lists: read the runs' fingerprint; say ``activity`` when it is not the one
        last known."""
        if self._fingerprint is None:
            return
        fingerprint = await self._fingerprint_read()
        if fingerprint != self._fingerprint:
            self._fingerprint = fingerprint
            await self.send_json({"type": "activity"})

    async def _activity_tell(self) -> None:
        """Say ``activity``, the fingerprint read first: the page fetches after it, so it shows at least that."""
        self._fingerprint = await self._fingerprint_read()
        await self.send_json({"type": "activity"})

    async def _fingerprint_read(self) -> str:
        return await database_sync_to_async(runs_fingerprint_read)(user=self.scope["user"])

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


def _activity_param(scope: dict[str, Any]) -> str | None:
    """``?activity=``, the fingerprint the page was rendered with, or None when absent (the page follows no
    list); ValueError when it is not one ``runs_fingerprint_read`` could have answered."""
    values = parse_qs(scope.get("query_string", b"").decode("latin1")).get("activity")
    if not values:
        return None
    if not _FINGERPRINT.fullmatch(values[0]):
        raise ValueError(f"not a fingerprint of runs: {values[0][:80]!r}")
    return values[0]
