"""Publishing log lines and run events to Channels groups, for the pages that watch them live.

Each log line goes to its execution's group (the whole line) and to its run's group (a compact
``log`` event: which node, which seq, which event — never the text). Run events go to the run's group.

Publishing is fire-and-forget: ``live_publish`` appends to an in-process outbox and returns at once,
and one event loop sends the outbox in order. A worker therefore never waits on Redis or on a slow
browser; when the outbox overflows (the layer is down or far behind) the oldest messages are dropped
and watchers recover them from the log file, which stays the source of truth.

What piled up for one group while the previous send was in flight goes as one ``live.batch`` message
(consumers unpack it in order, and send its lines to each socket as one frame), so a burst costs a few
layer round trips instead of one per line. A steady stream (a line every few milliseconds) is
coalesced the same way: a drain that starts right after a send waits ``COALESCE_SECONDS`` first.

Why not ``async_to_sync(layer.group_send)`` per message: called from a worker thread it starts a new
thread and event loop for every call, and channels-redis opens a new connection per loop (about 2 ms
a call, measured) — slower than the lines come. And the in-memory layer's queues belong to the
serving event loop, so they must only be touched from it. So the loop that sends is:

- with a layer shared between processes (channels-redis): a daemon thread of this process running
  its own loop (started on first use, and anew in a forked child such as a Celery prefork worker);
- with the in-memory layer: the serving loop the consumers run in (they register it on connect).
  No consumer in this process means nobody could receive, so nothing is sent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
import uuid
from collections import deque
from typing import Any

from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer

from graphs.events import RunEvent
from graphs.logs import LogLine
from graphs.models import WorkNodeExecution

logger = logging.getLogger(__name__)

Message = dict[str, Any]

# Past this many waiting messages the oldest are dropped; watchers refill from the log file.
MAX_PENDING = 10_000
# One group_send that takes longer than this is abandoned (and logged): the outbox must keep moving.
SEND_TIMEOUT_SECONDS = 2.0
# At most this many messages travel in one ``live.batch``.
MAX_BATCH = 200
# A drain starting this soon after the last send means lines are streaming in: it waits a moment so
# they travel together — one layer message, and one browser frame per socket, for several lines.
# At a hundred lines a second nothing waits; at a thousand, a line waits at most this long.
BURST_GAP_SECONDS = 0.005
COALESCE_SECONDS = 0.005
_WARN_EVERY_SECONDS = 60.0

_consumer_loop: asyncio.AbstractEventLoop | None = None
_own_loop: asyncio.AbstractEventLoop | None = None
_outbox: _Outbox | None = None
_state_lock = threading.Lock()


def node_exec_group(node_exec_id: Any) -> str:
    return f"node_exec.{_hex(node_exec_id)}"


def run_group(run_id: Any) -> str:
    return f"run.{_hex(run_id)}"


def live_publish(*, group: str, message: Message) -> None:
    """Hand ``message`` to the layer for ``group`` without waiting; never raises."""
    try:
        outbox = _outbox_current()
        if outbox is not None:
            outbox.put(group, message)
    except Exception:
        logger.exception("live publishing to %s failed", group)


def log_line_publish(execution: WorkNodeExecution, line: LogLine) -> None:
    """Log listener: the whole line to the execution's group, a compact ``log`` event to the run's."""
    line = _jsonable(line)
    live_publish(group=node_exec_group(execution.pk), message={"type": "log.line", "line": line})
    compact = {
        "event": "log",
        "run_id": str(execution.run_id),
        "node_exec_id": str(execution.pk),
        "node_id": execution.node_id,
        "seq": line["seq"],
        "line_event": line.get("event"),
    }
    live_publish(group=run_group(execution.run_id), message={"type": "run.event", "event": compact})


def log_closed_publish(execution: WorkNodeExecution, last_seq: int) -> None:
    """Log close listener: tell the execution's watchers no more lines are coming."""
    live_publish(group=node_exec_group(execution.pk), message={"type": "log.closed", "last_seq": last_seq})


def run_event_publish(payload: RunEvent) -> None:
    """Run event listener: relay the event to the run's group."""
    live_publish(group=run_group(payload["run_id"]), message={"type": "run.event", "event": _jsonable(payload)})


def live_consumer_loop_register(loop: asyncio.AbstractEventLoop) -> None:
    """Record the event loop consumers run in; the in-memory layer can only be fed from it."""
    global _consumer_loop
    _consumer_loop = loop


class _Outbox:
    """Messages waiting for one event loop to send them: in order per group, one drain at a time."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop, layer: BaseChannelLayer) -> None:
        self.loop = loop
        self.layer = layer
        self._pending: deque[tuple[str, Message]] = deque()
        self._lock = threading.Lock()
        self._draining = False
        self._drain_task: asyncio.Task | None = None
        self._dropped = 0
        self._warned_at = 0.0
        self._sent_at = float("-inf")

    def put(self, group: str, message: Message) -> None:
        with self._lock:
            if len(self._pending) >= MAX_PENDING:
                self._pending.popleft()
                self._dropped += 1
            self._pending.append((group, message))
            if self._draining:
                return
            self._draining = True
        try:
            self.loop.call_soon_threadsafe(self._drain_start)
        except RuntimeError:  # the loop is closed: whoever was listening on it is gone
            with self._lock:
                self._pending.clear()
                self._draining = False

    def _drain_start(self) -> None:
        # Kept referenced: the loop holds tasks only weakly, and a collected drain would never clear _draining.
        self._drain_task = self.loop.create_task(self._drain())

    async def _drain(self) -> None:
        while True:
            if time.monotonic() - self._sent_at < BURST_GAP_SECONDS:
                await asyncio.sleep(COALESCE_SECONDS)
            with self._lock:
                if not self._pending:
                    self._draining = False
                    return
                batch = list(self._pending)
                self._pending.clear()
                dropped, self._dropped = self._dropped, 0
            if dropped:
                self._warn(f"live outbox overflowed: {dropped} messages dropped (watchers refill from the log files)")
            by_group: dict[str, list[Message]] = {}
            for group, message in batch:
                by_group.setdefault(group, []).append(message)
            await asyncio.gather(*(self._send_in_order(group, messages) for group, messages in by_group.items()))
            self._sent_at = time.monotonic()

    async def _send_in_order(self, group: str, messages: list[Message]) -> None:
        for start in range(0, len(messages), MAX_BATCH):
            chunk = messages[start : start + MAX_BATCH]
            message = chunk[0] if len(chunk) == 1 else {"type": "live.batch", "messages": chunk}
            try:
                await asyncio.wait_for(self.layer.group_send(group, message), SEND_TIMEOUT_SECONDS)
            except Exception as error:
                self._warn(f"live publishing to {group} failed: {error!r}")

    def _warn(self, text: str) -> None:
        # An unreachable layer fails every send; one warning a minute says so without flooding the log.
        now = time.monotonic()
        if now - self._warned_at >= _WARN_EVERY_SECONDS:
            self._warned_at = now
            logger.warning(text)


def _outbox_current() -> _Outbox | None:
    """Return the outbox for the current layer and sending loop, or None when nobody could listen."""
    global _outbox
    layer = get_channel_layer()
    if layer is None:
        return None
    with _state_lock:
        loop = _consumer_loop if isinstance(layer, InMemoryChannelLayer) else _own_loop_get()
        if loop is None or loop.is_closed():
            return None
        if _outbox is None or _outbox.loop is not loop or _outbox.layer is not layer:
            _outbox = _Outbox(loop=loop, layer=layer)
        return _outbox


def _own_loop_get() -> asyncio.AbstractEventLoop:
    """Return this process's publishing loop, starting its thread on first use."""
    global _own_loop
    if _own_loop is None:
        _own_loop = asyncio.new_event_loop()
        threading.Thread(target=_own_loop.run_forever, name="live-publisher", daemon=True).start()
    return _own_loop


def _forget_after_fork() -> None:
    # A forked child inherits the parent's loops and lock but none of its threads: start afresh.
    global _consumer_loop, _own_loop, _outbox, _state_lock
    _consumer_loop, _own_loop, _outbox, _state_lock = None, None, None, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    # The file holds what json.dumps(default=str) made of the fields; publish exactly that, so a live
    # line equals the one read back from the file and any layer can serialise it.
    return json.loads(json.dumps(data, ensure_ascii=False, default=str))


def _hex(value: Any) -> str:
    return uuid.UUID(str(value)).hex
