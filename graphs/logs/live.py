"""Publishing log lines and run events to Channels groups, for the pages that watch them live.

Each log line goes to its execution's group (the whole line) and to its run's group (a compact
``log`` event: which node, which seq, which event — never the text). Run events go to the run's group,
and those that may change an inbox or a list page to their project's inbox group too
(``graphs.reads.inbox_events``).

Publishing is fire-and-forget: ``live_publish`` appends to an in-process outbox and returns at once,
and one sender sends the outbox in order. A worker therefore never waits on Redis or on a slow
browser; when the outbox overflows (the layer is down or far behind) the oldest messages are dropped
and watchers recover them from the log store, which stays the source of truth.

What piled up for one group while the previous send was in flight goes as one message — for log lines
a ``log.lines`` frame serialized here once, which consumers send to each socket as it is; otherwise a
``live.batch`` they unpack in order — so a burst costs a few layer round trips instead of one per line.
A steady stream (a line every few milliseconds) is coalesced the same way: a drain that starts right
after a send waits ``COALESCE_SECONDS`` first.

Why not ``async_to_sync(layer.group_send)`` per message: called from a worker thread it starts a new
thread and event loop for every call, and channels-redis opens a new connection per loop — slower
than the lines come. And the in-memory layer's queues belong to the
serving event loop, so they must only be touched from it. So the sender is:

- with channels-redis's pub/sub layer (the console's, whenever Redis is configured): a daemon thread
  of this process that publishes each drain to Redis as one pipeline (started on first use, and anew
  in a forked child such as a Celery prefork worker), see ``_RedisPubSubOutbox``;
- with the in-memory layer: the serving loop the consumers run in (they register it on connect).
  No consumer in this process means nobody could receive, so nothing is sent;
- with any other layer: an event loop in a daemon thread of this process, calling ``group_send``.
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

import redis
from channels.layers import DEFAULT_CHANNEL_LAYER, BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.conf import settings

from graphs.logs.events import RunEvent
from graphs.logs.numbering import LogLine
from graphs.metrics.counters import live_messages_dropped_count, live_publish_lag_observe
from graphs.models import WorkNodeExecution

logger = logging.getLogger(__name__)

Message = dict[str, Any]

# Past this many waiting messages the oldest are dropped; watchers refill from the log store.
MAX_PENDING = 10_000
# One group_send that takes longer than this is abandoned (and logged): the outbox must keep moving.
SEND_TIMEOUT_SECONDS = 2.0
# At most this many messages travel in one ``live.batch``.
MAX_BATCH = 200
# A drain starting this soon after the last send means lines are streaming in: it waits a moment so
# they travel together — one layer message, and one browser frame per socket, for several lines.
# At a hundred lines a second nothing waits; at a thousand, a line waits at most this long.
BURST_GAP_SECONDS = 0.005
COALESCE_SECONDS = 0.01
_WARN_EVERY_SECONDS = 60.0

_consumer_loop: asyncio.AbstractEventLoop | None = None
_own_loop: asyncio.AbstractEventLoop | None = None
_outbox: _Outbox | None = None
_state_lock = threading.Lock()


def node_exec_group(node_exec_id: Any) -> str:
    return f"node_exec.{_hex(node_exec_id)}"


def run_group(run_id: Any) -> str:
    return f"run.{_hex(run_id)}"


def project_inbox_group(project_id: Any) -> str:
    """The group of the inbox sockets of a project's members: told of the run events that may change an inbox or
    a list page."""
    return f"inbox.project.{int(project_id)}"


def live_publish(*, group: str, message: Message) -> None:
    """Hand ``message`` to the layer for ``group`` without waiting; never raises."""
    live_publish_together([(group, message)])


def live_publish_together(messages: list[tuple[str, Message]]) -> None:
    """Hand several (group, message) pairs to the layer at once, so they leave in one drain; never raises."""
    try:
        outbox = _outbox_current()
        if outbox is not None:
            outbox.put(messages)
    except Exception:
        logger.exception("live publishing to %s failed", ", ".join(group for group, _ in messages))


def log_line_publish(execution: WorkNodeExecution, line: LogLine) -> None:
    """Log listener: the whole line to the execution's group, a compact ``log`` event to the run's.

    Both go in together: handed over one after the other, the first would leave alone and the second
    would find a send just made, and wait to be coalesced with lines that at a steady pace never come.
    The line is the one stored, already of JSON's own types (``numbering.log_line_text``): it goes as it is.
    """
    compact = {
        "event": "log",
        "run_id": str(execution.run_id),
        "node_exec_id": str(execution.pk),
        "node_id": execution.node_id,
        "seq": line["seq"],
        "line_event": line.get("event"),
    }
    live_publish_together([
        (node_exec_group(execution.pk), {"type": "log.line", "line": line}),
        (run_group(execution.run_id), {"type": "run.event", "event": compact}),
    ])


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
    """Messages waiting to be sent: in order per group, by one sender at a time.

    ``put`` never blocks: it appends, and wakes the sender unless a drain is already under way.
    A sender takes batches until ``_drained``, calling ``_sent`` after each send; it waits for more
    before taking one only when messages came in right after its last send (a stream, not a lone line).
    """

    def __init__(self, *, layer: BaseChannelLayer) -> None:
        self.layer = layer
        self._pending: deque[tuple[str, Message]] = deque()
        self._lock = threading.Lock()
        self._draining = False
        self._dropped = 0
        self._warned_at = 0.0
        self._sent_at = float("-inf")
        self._oldest_put_at = 0.0

    def put(self, messages: list[tuple[str, Message]]) -> None:
        with self._lock:
            overflow = len(self._pending) + len(messages) - MAX_PENDING
            for _ in range(max(overflow, 0)):
                if self._pending:
                    self._pending.popleft()
                    self._dropped += 1
            if not self._pending:
                self._oldest_put_at = time.monotonic()
            self._pending.extend(messages)
            if self._draining:
                return
            self._draining = True
        self._wake()

    def _wake(self) -> None:
        raise NotImplementedError

    def _coalescing(self) -> bool:
        """Whether a drain starting now follows a send closely enough to wait for more lines first."""
        return time.monotonic() - self._sent_at < BURST_GAP_SECONDS

    def _drained(self) -> bool:
        """Whether nothing waits any more; if so, the drain is over (the next ``put`` starts another)."""
        with self._lock:
            if self._pending:
                return False
            self._draining = False
            return True

    def _batch_take(self) -> dict[str, list[Message]]:
        """Everything waiting, as each group's layer messages in order."""
        with self._lock:
            batch = list(self._pending)
            self._pending.clear()
            dropped, self._dropped = self._dropped, 0
        if batch:
            live_publish_lag_observe(time.monotonic() - self._oldest_put_at)
        live_messages_dropped_count(dropped)
        if dropped:
            self._warn(f"live outbox overflowed: {dropped} messages dropped (watchers refill from the log store)")
        by_group: dict[str, list[Message]] = {}
        for group, message in batch:
            by_group.setdefault(group, []).append(message)
        return {group: _layer_messages(messages) for group, messages in by_group.items()}

    def _sent(self) -> None:
        self._sent_at = time.monotonic()

    def _warn(self, text: str) -> None:
        # An unreachable layer fails every send; one warning a minute says so without flooding the log.
        now = time.monotonic()
        if now - self._warned_at >= _WARN_EVERY_SECONDS:
            self._warned_at = now
            logger.warning(text)


def _layer_messages(messages: list[Message]) -> list[Message]:
    """One group's messages as layer messages: alone, or up to ``MAX_BATCH`` of them together."""
    chunks = [messages[start : start + MAX_BATCH] for start in range(0, len(messages), MAX_BATCH)]
    return [chunk[0] if len(chunk) == 1 else _together(chunk) for chunk in chunks]


def _together(chunk: list[Message]) -> Message:
    """Several messages as one: a ``live.batch``, or for log lines alone a ``log.lines`` frame made here.

    A burst of lines goes to every watching socket as the same ``lines`` frame, so it is serialized
    once, by the publisher, instead of by each consumer for each socket: at a thousand lines a second
    to a hundred sockets that was most of a console process's work. ``seqs`` and ``contiguous`` let a
    consumer send the frame as it is when it follows the last line it sent.
    """
    if any(message["type"] != "log.line" for message in chunk):
        return {"type": "live.batch", "messages": chunk}
    lines = [message["line"] for message in chunk]
    seqs = [line["seq"] for line in lines]
    return {
        "type": "log.lines",
        "seqs": [seqs[0], seqs[-1]],
        "contiguous": seqs == list(range(seqs[0], seqs[0] + len(seqs))),
        "frame": json.dumps({"type": "lines", "lines": lines}, ensure_ascii=False),
    }


class _LoopOutbox(_Outbox):
    """Sent by an event loop with the layer's ``group_send``: any layer, and the only way to feed the
    in-memory layer, whose queues belong to the loop its consumers run in."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop, layer: BaseChannelLayer) -> None:
        super().__init__(layer=layer)
        self.loop = loop
        self._drain_task: asyncio.Task | None = None

    def _wake(self) -> None:
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
        while not self._drained():
            if self._coalescing():
                await asyncio.sleep(COALESCE_SECONDS)
            by_group = self._batch_take()
            await asyncio.gather(*(self._send_in_order(group, messages) for group, messages in by_group.items()))
            self._sent()

    async def _send_in_order(self, group: str, messages: list[Message]) -> None:
        for message in messages:
            try:
                await asyncio.wait_for(self.layer.group_send(group, message), SEND_TIMEOUT_SECONDS)
            except Exception as error:
                self._warn(f"live publishing to {group} failed: {error!r}")


class _RedisPubSubOutbox(_Outbox):
    """Sent by a thread of its own straight to Redis, as channels-redis's pub/sub layer would send them.

    The layer's ``group_send`` runs on an event loop: a loop thread in each worker process, whose
    asyncio and redis-asyncio machinery would cost every node time, and would take the
    interpreter lock from the thread running the node every time a database reply came in. A plain
    thread sends each drain as one pipeline of PUBLISH commands and holds the lock only while it builds it.
    The messages are the layer's own (``serialize``), on the channel it subscribes a group's watchers
    to (``<prefix>__group__<group>``, channels-redis 4.3); a test checks the layer receives them.
    """

    def __init__(self, *, layer: BaseChannelLayer, url: str, prefix: str) -> None:
        super().__init__(layer=layer)
        self._prefix = prefix
        self._redis = redis.Redis.from_url(
            url, socket_timeout=SEND_TIMEOUT_SECONDS, socket_connect_timeout=SEND_TIMEOUT_SECONDS
        )
        self._wakeup = threading.Event()
        threading.Thread(target=self._send_forever, name="live-publisher", daemon=True).start()

    def _wake(self) -> None:
        self._wakeup.set()

    def _send_forever(self) -> None:
        while True:
            self._wakeup.wait()
            self._wakeup.clear()
            while not self._drained():
                if self._coalescing():
                    time.sleep(COALESCE_SECONDS)
                self._send(self._batch_take())
                self._sent()

    def _send(self, by_group: dict[str, list[Message]]) -> None:
        try:
            pipeline = self._redis.pipeline(transaction=False)
            for group, messages in by_group.items():
                for message in messages:
                    pipeline.publish(f"{self._prefix}__group__{group}", self.layer.serialize(message))
            pipeline.execute()
        except Exception as error:
            self._warn(f"live publishing to {len(by_group)} groups failed: {error!r}")


def _outbox_current() -> _Outbox | None:
    """Return the outbox for the current layer and sending loop, or None when nobody could listen."""
    global _outbox
    layer = get_channel_layer()
    if layer is None:
        return None
    with _state_lock:
        if _outbox is not None and _outbox.layer is layer and not isinstance(_outbox, _LoopOutbox):
            return _outbox
        redis_target = _redis_pubsub_target(layer)
        if redis_target is not None:
            _outbox = _RedisPubSubOutbox(layer=layer, url=redis_target[0], prefix=redis_target[1])
            return _outbox
        loop = _consumer_loop if isinstance(layer, InMemoryChannelLayer) else _own_loop_get()
        if loop is None or loop.is_closed():
            return None
        if not isinstance(_outbox, _LoopOutbox) or _outbox.loop is not loop or _outbox.layer is not layer:
            _outbox = _LoopOutbox(loop=loop, layer=layer)
        return _outbox


def _redis_pubsub_target(layer: BaseChannelLayer) -> tuple[str, str] | None:
    """(Redis URL, channel prefix) of a channels-redis pub/sub layer on one host given by URL, else None."""
    if not isinstance(layer, RedisPubSubChannelLayer):
        return None
    config = settings.CHANNEL_LAYERS.get(DEFAULT_CHANNEL_LAYER, {}).get("CONFIG", {})
    hosts = config.get("hosts") or []
    if len(hosts) != 1 or not isinstance(hosts[0], str):
        return None
    return hosts[0], config.get("prefix", "asgi")


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
    # What json.dumps(default=str) makes of an event's fields, as the log store does of a line's: any
    # layer can serialise it, and a page reads the same live as from the database.
    return json.loads(json.dumps(data, ensure_ascii=False, default=str))


def _hex(value: Any) -> str:
    return value.hex if isinstance(value, uuid.UUID) else uuid.UUID(str(value)).hex
