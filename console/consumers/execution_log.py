"""``NodeExecutionLogConsumer``: one execution's live log, and the per-process watch that catches what
the channel layer never brings."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async

from console.consumers.base import CLOSE_BAD_REQUEST, CLOSE_NOT_FOUND, LiveConsumer, accept_signed_in
from graphs.logs.live import live_consumer_loop_register, node_exec_group
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile
from graphs.reads.access import execution_visible
from graphs.reads.live import LogState, log_state_read, log_states_read

logger = logging.getLogger(__name__)

# How often the log watch reads where the watched logs stand (lines nobody relayed here, a close).
POLL_SECONDS = 0.5
# How long a line missing from the store is waited for before the lines after it are sent anyway.
GAP_WAIT_SECONDS = 5.0
# Backlogs are read and sent in slices, so a long log never sits whole in memory.
READ_CHUNK = 500


class NodeExecutionLogConsumer(LiveConsumer):
    """``/ws/node-executions/<uuid>/log/?after=<seq>``: the backlog after ``seq``, live lines, then ``end``.

    Sends ``{"type": "line", "line": {...}}`` per line — or ``{"type": "lines", "lines": [...]}`` for a
    burst that arrived together — in seq order, each once; then, when the log is closed and everything
    is sent, ``{"type": "end", "last_seq": n}`` and a normal close.

    The backlog comes from the database, so any console process serves any log. The group is joined
    before the backlog is read, so no line falls between the two; a line met both ways is dropped by
    seq. A live line past the next expected seq means some never came here (channels-redis drops
    silently past a channel's capacity): the missing ones are read from the store first, and a line
    is never sent past one that is missing. The process's log watch (``_LogWatch``) covers what the
    layer never brings: lines published where nobody relays them, a close announced elsewhere.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The watch and the message handlers both send: one at a time, so seq order holds.
        self._lock = asyncio.Lock()
        self._node_exec_id: Any = None
        self._log_file: ExecutionLogFile | None = None
        self._last_sent = 0
        self._stored_seen = 0
        self._close_seq: int | None = None
        self._gap_since: float | None = None
        self._live_at = 0.0
        self._finished = False

    async def connect(self) -> None:
        user = await accept_signed_in(self)
        if user is None:
            return
        after = _after_param(self.scope)
        if after is None:
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        self._node_exec_id = self.scope["url_route"]["kwargs"]["node_exec_id"]
        if not await self._visible(user):
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self._access_checked_at = time.monotonic()
        live_consumer_loop_register(asyncio.get_running_loop())
        await self._group_join(node_exec_group(self._node_exec_id))
        self._last_sent = after
        async with self._lock:
            await self._state_apply(await _log_state_read(self._node_exec_id))
        if not self._finished:
            _LogWatch.of_this_loop().add(self)

    async def disconnect(self, code: int) -> None:
        self._finished = True
        _LogWatch.of_this_loop().discard(self)

    async def _visible(self, user: Any) -> bool:
        return await _execution_visible(self._node_exec_id, user=user)

    async def _stopped(self) -> bool:
        """True once the log is finished or the user lost access to it (the socket is then closed)."""
        if not self._finished and not await self._access_recheck():
            self._finished = True
        return self._finished

    async def log_line(self, message: dict[str, Any]) -> None:
        await self._relay([message["line"]])

    async def log_lines(self, message: dict[str, Any]) -> None:
        """A burst of lines, as the ``lines`` frame the publisher made (see ``graphs.logs.live``): sent as it is
        when it follows the last line sent, else taken apart and relayed line by line."""
        first, last = message["seqs"]
        async with self._lock:
            self._live_at = time.monotonic()
            if await self._stopped():
                return
            if message["contiguous"] and first == self._last_sent + 1:
                await self.send(text_data=message["frame"])
                self._last_sent = last
                await self._finish_if_done()
                return
        await self._relay(json.loads(message["frame"])["lines"])

    async def live_batch(self, message: dict[str, Any]) -> None:
        """Lines in a ``live.batch`` go to the browser a run at a time, as one ``lines`` frame each; the
        other messages (a close) are handled in their place."""
        lines: list[dict[str, Any]] = []
        for inner in message["messages"]:
            if inner["type"] == "log.line":
                lines.append(inner["line"])
                continue
            if lines:
                await self._relay(lines)
                lines = []
            await getattr(self, get_handler_name(inner))(inner)
        if lines:
            await self._relay(lines)

    async def _relay(self, lines: list[dict[str, Any]]) -> None:
        """Send the live lines not sent yet, in seq order; a gap before one is filled from the store first."""
        async with self._lock:
            self._live_at = time.monotonic()
            if await self._stopped():
                return
            fresh: list[dict[str, Any]] = []
            for line in lines:
                last = fresh[-1]["seq"] if fresh else self._last_sent
                if line["seq"] <= last:
                    continue
                if line["seq"] > last + 1:
                    await self._send_lines(fresh)
                    fresh = []
                    await self._log_file_ensure()
                    await self._catch_up()
                    if line["seq"] != self._last_sent + 1:
                        continue  # still missing lines before it: it comes from the store after them
                fresh.append(line)
            await self._send_lines(fresh)
            await self._finish_if_done()

    async def log_closed(self, message: dict[str, Any]) -> None:
        async with self._lock:
            if not await self._stopped():
                self._close_seq = message["last_seq"]
                await self._log_file_ensure()
                await self._catch_up()
                await self._finish_if_done()

    async def state_seen(self, state: LogState | None) -> None:
        """The log watch read where the log stands: catch up on lines stored a while ago and never
        relayed, and notice a close the layer could not announce here."""
        async with self._lock:
            if await self._stopped():
                return
            if state is None or state.complete:
                await self._state_apply(state)
            elif state.stored_seq > self._last_sent:
                # A line stored by the previous look and still not relayed will not come live — unless
                # the layer is still bringing lines: then this process is only behind, and reading the
                # store as well would add to what it is behind with.
                due = self._stored_seen > self._last_sent and time.monotonic() - self._live_at >= POLL_SECONDS
                self._stored_seen = state.stored_seq
                if due:
                    await self._state_apply(state)

    async def _state_apply(self, state: LogState | None) -> None:
        if state is None:  # the execution was deleted while watched
            await self._finish()
            return
        self._log_file = state.log_file or self._log_file
        if state.complete:
            self._close_seq = state.last_seq
        await self._catch_up()
        await self._finish_if_done()

    async def _log_file_ensure(self) -> None:
        # Lines can arrive before this consumer saw the log's row: the execution started after it connected.
        if self._log_file is None:
            state = await _log_state_read(self._node_exec_id)
            self._log_file = state.log_file if state is not None else None

    async def _catch_up(self) -> None:
        """Send the stored lines after the last one sent, up to the first that is missing.

        A missing line is waited for (a process may commit its lines a moment after another's),
        but not forever: one lost with a database crash is passed over after ``GAP_WAIT_SECONDS``.
        """
        if self._log_file is None:
            return
        while True:
            lines = await _log_read(self._log_file, after=self._last_sent, limit=READ_CHUNK)
            contiguous = _contiguous_from(self._last_sent, lines)
            if len(contiguous) < len(lines):
                now = time.monotonic()
                if self._gap_since is None:
                    self._gap_since = now
                if now - self._gap_since >= GAP_WAIT_SECONDS:
                    logger.warning("log of %s has no line %d; passed over", self._node_exec_id, self._last_sent + 1)
                    contiguous = lines
            if contiguous:
                self._gap_since = None
            await self._send_lines(contiguous)
            if len(lines) < READ_CHUNK or len(contiguous) < len(lines):
                return

    async def _finish_if_done(self) -> None:
        if self._close_seq is None or self._finished:
            return
        gave_up = self._gap_since is not None and time.monotonic() - self._gap_since >= GAP_WAIT_SECONDS
        if self._last_sent >= self._close_seq or gave_up:
            await self._finish()

    async def _send_lines(self, lines: list[dict[str, Any]]) -> None:
        if len(lines) == 1:
            await self.send_json({"type": "line", "line": lines[0]})
        elif lines:
            await self.send_json({"type": "lines", "lines": lines})
        if lines:
            self._last_sent = lines[-1]["seq"]

    async def _finish(self) -> None:
        self._finished = True
        _LogWatch.of_this_loop().discard(self)
        await self.send_json({"type": "end", "last_seq": self._last_sent})
        await self.close()


class _LogWatch:
    """Looks, every ``POLL_SECONDS``, at where the logs watched from this process stand: one query for
    all of them, however many sockets watch, and each socket is told about its own."""

    _by_loop: dict[asyncio.AbstractEventLoop, _LogWatch] = {}

    def __init__(self) -> None:
        self._consumers: set[NodeExecutionLogConsumer] = set()
        self._task: asyncio.Task | None = None

    @classmethod
    def of_this_loop(cls) -> _LogWatch:
        loop = asyncio.get_running_loop()
        if loop not in cls._by_loop:
            cls._by_loop = {known: watch for known, watch in cls._by_loop.items() if not known.is_closed()}
            cls._by_loop[loop] = cls()
        return cls._by_loop[loop]

    def add(self, consumer: NodeExecutionLogConsumer) -> None:
        self._consumers.add(consumer)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._watch())

    def discard(self, consumer: NodeExecutionLogConsumer) -> None:
        self._consumers.discard(consumer)

    async def _watch(self) -> None:
        while self._consumers:
            await asyncio.sleep(POLL_SECONDS)
            watching = list(self._consumers)
            if not watching:
                return
            try:
                states = await _log_states_read(list({c._node_exec_id for c in watching}))
            except Exception:
                logger.exception("reading where %d watched logs stand failed", len(watching))
                continue
            for consumer in watching:
                try:
                    await consumer.state_seen(states.get(str(consumer._node_exec_id)))
                except Exception:
                    logger.exception("relaying the log of %s failed", consumer._node_exec_id)


def _contiguous_from(last_sent: int, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leading lines that follow ``last_sent`` seq by seq."""
    expected = last_sent + 1
    for index, line in enumerate(lines):
        if line["seq"] != expected:
            return lines[:index]
        expected += 1
    return lines


async def _execution_visible(node_exec_id: Any, *, user: Any) -> bool:
    return await database_sync_to_async(execution_visible)(node_exec_id=node_exec_id, user=user)


async def _log_state_read(node_exec_id: Any) -> LogState | None:
    return await database_sync_to_async(log_state_read)(node_exec_id=node_exec_id)


async def _log_states_read(node_exec_ids: list[Any]) -> dict[str, LogState]:
    return await database_sync_to_async(log_states_read)(node_exec_ids=node_exec_ids)


async def _log_read(log_file: ExecutionLogFile, *, after: int, limit: int) -> list[dict[str, Any]]:
    return await database_sync_to_async(log_read)(log_file=log_file, after=after, limit=limit)


def _after_param(scope: dict[str, Any]) -> int | None:
    """Return ``?after=`` as an int (0 when absent), or None when it is not a non-negative integer."""
    values = parse_qs(scope.get("query_string", b"").decode("latin1")).get("after")
    if not values:
        return 0
    try:
        after = int(values[0])
    except ValueError:
        return None
    return after if after >= 0 else None
