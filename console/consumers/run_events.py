"""``RunEventsConsumer``: a snapshot of one run, then its events as they happen."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from channels.db import database_sync_to_async

from console.consumers.base import CLOSE_NOT_FOUND, LiveConsumer, accept_signed_in
from graphs.logs.live import live_consumer_loop_register, run_group
from graphs.reads.access import run_visible
from graphs.reads.live import run_fingerprint_read, run_snapshot_read

logger = logging.getLogger(__name__)

# How often a run consumer checks whether its run changed without any event reaching it.
RUN_RESYNC_SECONDS = 3.0


class RunEventsConsumer(LiveConsumer):
    """``/ws/runs/<uuid>/``: a ``snapshot`` of the run on connect, then every run event as it happens.

    Sends ``{"type": "snapshot", "run_id", "status", "manifest_version", "progress": {"done", "total"},
    "nodes": [{"node_id", "node_exec_id", "attempt", "status", "cause"}, ...]}`` (each node's latest
    attempt, planning calls included; progress counts the work nodes as the engine does), then
    ``{"type": "event", "event": {...}}`` per run event — ``nodes``, ``nodes_appended``, ``run_status``,
    ``progress`` as the engine emits them, and ``{"event": "log", "node_exec_id", "node_id", "seq",
    "line_event"}`` per log line. The group is joined before the snapshot is read, so an event may be
    reflected in both; events state facts, applying one twice is harmless. A page that suspects it
    missed one reconnects for a fresh snapshot.

    Changes no event brings here — a run executed by another process in the embedded mode, whose
    in-memory layer reaches only its own process, or events dropped on the way — are noticed by a
    cheap check every ``RUN_RESYNC_SECONDS``: when the run changed while no event arrived, a fresh
    snapshot is sent; and once events stop after a burst of them (any of which the layer may have
    dropped), the run as it is now is compared with what this socket told the page, and a snapshot sent
    where they differ.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resync_task: asyncio.Task | None = None
        self._events_seen = 0
        self._run_id: Any = None
        # What this socket has told the page: the run's status and each node's latest status, from the
        # snapshots sent and the events relayed since.
        self._told: dict[str, str] = {}

    async def connect(self) -> None:
        user = await accept_signed_in(self)
        if user is None:
            return
        run_id = self._run_id = self.scope["url_route"]["kwargs"]["run_id"]
        if not await self._visible(user):
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self._access_checked_at = time.monotonic()
        live_consumer_loop_register(asyncio.get_running_loop())
        await self._group_join(run_group(run_id))
        fingerprint = await database_sync_to_async(run_fingerprint_read)(run_id=run_id)
        snapshot = await database_sync_to_async(run_snapshot_read)(run_id=run_id)
        if snapshot is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self._snapshot_send(snapshot)
        self._resync_task = asyncio.create_task(self._resync(run_id, fingerprint))

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if self._resync_task is not None:
            self._resync_task.cancel()

    async def _visible(self, user: Any) -> bool:
        return await _run_visible(self._run_id, user=user)

    async def run_event(self, message: dict[str, Any]) -> None:
        if not await self._access_recheck():
            return
        self._events_seen += 1
        event = message["event"]
        if event.get("event") == "nodes":
            self._told.update({node["node_id"]: node.get("status") for node in event.get("nodes", [])})
        elif event.get("event") == "run_status":
            self._told[""] = event.get("status")
        await self.send_json({"type": "event", "event": event})

    async def _snapshot_send(self, snapshot: dict[str, Any]) -> None:
        self._told = {"": snapshot["status"], **{node["node_id"]: node["status"] for node in snapshot["nodes"]}}
        await self.send_json({"type": "snapshot", **snapshot})

    def _told_differs(self, snapshot: dict[str, Any]) -> bool:
        """Whether the page, as this socket told it, differs from ``snapshot``."""
        now = {"": snapshot["status"], **{node["node_id"]: node["status"] for node in snapshot["nodes"]}}
        return any(self._told.get(key) != status for key, status in now.items())

    async def _resync(self, run_id: Any, fingerprint: tuple) -> None:
        events_seen = self._events_seen
        # Whether events came since the last snapshot: under a storm of them the layer may have dropped
        # some, which no later event repairs.
        heard = False
        while True:
            await asyncio.sleep(RUN_RESYNC_SECONDS)
            try:
                if not await self._access_recheck():
                    return
                current = await database_sync_to_async(run_fingerprint_read)(run_id=run_id)
                if self._events_seen != events_seen:
                    # Events are arriving: they carry the changes while they last.
                    heard = True
                elif current != fingerprint or heard:
                    # Quiet now, after a change no event brought, or after a burst of events: a snapshot
                    # goes to the page when what it was told differs from the run as it is.
                    snapshot = await database_sync_to_async(run_snapshot_read)(run_id=run_id)
                    if snapshot is not None and (current != fingerprint or self._told_differs(snapshot)):
                        await self._snapshot_send(snapshot)
                    heard = False
                fingerprint, events_seen = current, self._events_seen
            except Exception:
                logger.exception("checking run %s for changes failed", run_id)


async def _run_visible(run_id: Any, *, user: Any) -> bool:
    return await database_sync_to_async(run_visible)(run_id=run_id, user=user)
