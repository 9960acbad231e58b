"""The live log of one execution over a WebSocket: backlog, live lines, reconnects, gaps, the watch, end.

These run over whichever channel layer the settings pick: in-memory by default, channels-redis under
``CI=true`` (``REDIS_URL`` set).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from console.asgi import application
from console.consumers import execution_log
from graphs.logs import live
from graphs.logs import store as logs
from graphs.logs.store import log_append, log_file_close, log_file_open
from graphs.models import ExecutionLogFile, ExecutionLogLine
from tests import factories
from tests.clients import socket_headers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]

# How long a wait for what must come may last before the test fails: every wait here is for a frame that
# will arrive, so a busy machine (another process's start-up, say) only makes it come later.
TIMEOUT = 30

append = sync_to_async(log_append)
close_log = sync_to_async(log_file_close)



@pytest.fixture
def execution(task):
    execution = new_execution(task, status="running")
    log_file_open(execution=execution)
    return execution


def new_execution(task, *, status: str):
    return factories.ExecutionFactory(run=factories.RunFactory(task=task), status=status)


@pytest.fixture
def slow_poll(monkeypatch):
    """Only the layer can bring lines quickly: the log watch waits longer than any assertion."""
    monkeypatch.setattr(execution_log, "POLL_SECONDS", 60)


async def connect_log(user, execution, *, after: int | None = None) -> WebsocketCommunicator:
    path = f"/ws/node-executions/{execution.pk}/log/" + (f"?after={after}" if after is not None else "")
    communicator = WebsocketCommunicator(application, path, headers=await socket_headers(user))
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


async def receive_lines(communicator: WebsocketCommunicator, count: int) -> list[dict]:
    """The next ``count`` lines, whether they came one per ``line`` frame or together in a ``lines`` frame."""
    buffered = communicator.__dict__.setdefault("buffered_lines", [])
    while len(buffered) < count:
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert message["type"] in {"line", "lines"}, message
        buffered += [message["line"]] if message["type"] == "line" else message["lines"]
    taken = buffered[:count]
    del buffered[:count]
    return taken


async def receive_seqs(communicator: WebsocketCommunicator, count: int) -> list[int]:
    return [line["seq"] for line in await receive_lines(communicator, count)]


async def assert_end(communicator: WebsocketCommunicator, last_seq: int) -> None:
    assert await communicator.receive_json_from(timeout=TIMEOUT) == {"type": "end", "last_seq": last_seq}
    closing = await communicator.receive_output(timeout=TIMEOUT)
    assert closing["type"] == "websocket.close"
    assert closing.get("code", 1000) == 1000


def write_unpublished(execution, text: str) -> int:
    """Store a line the way another process would: in the database only, announced to no one here."""
    log_file = ExecutionLogFile.objects.get(node_exec=execution)
    seq = (log_file.lines.order_by("-seq").values_list("seq", flat=True).first() or 0) + 1
    now = datetime.now(UTC)
    line = {"seq": seq, "ts": now.isoformat(timespec="milliseconds"), "event": "agent_output", "text": text}
    ExecutionLogLine.objects.create(log_file=log_file, seq=seq, ts=now, event="agent_output", text=json.dumps(line))
    return seq


async def test_it_sends_the_backlog_then_live_lines_in_order(alice, execution):
    for number in range(3):
        await append(execution=execution, event="agent_output", text=f"line {number}")
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 3) == [1, 2, 3]
        await append(execution=execution, event="agent_output", text="live one")
        await append(execution=execution, event="agent_output", text="live two")
        live = await receive_lines(communicator, 2)
        assert [line["seq"] for line in live] == [4, 5]
        assert (live[0]["text"], live[0]["event"]) == ("live one", "agent_output")
        await close_log(execution=execution)
        await assert_end(communicator, last_seq=5)
    finally:
        await communicator.disconnect()


async def test_lines_from_a_worker_thread_of_the_serving_process_arrive_live(alice, execution, slow_poll):
    await append(execution=execution, event="node_start")  # also caches the log row: the thread needs no query
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 1) == [1]
        # A plain thread, like the embedded executor's: no event loop of its own, none inherited.
        await asyncio.to_thread(log_append, execution=execution, event="agent_output", text="from a worker")
        assert await receive_seqs(communicator, 1) == [2]
    finally:
        await communicator.disconnect()


async def test_it_sends_only_lines_after_the_given_seq(alice, execution):
    for number in range(5):
        await append(execution=execution, event="agent_output", text=f"line {number}")
    communicator = await connect_log(alice, execution, after=3)
    try:
        assert await receive_seqs(communicator, 2) == [4, 5]
        assert await communicator.receive_nothing(timeout=0.2)
    finally:
        await communicator.disconnect()


async def test_a_reconnect_with_after_loses_and_duplicates_nothing(alice, execution):
    await append(execution=execution, event="agent_output", text="before")
    first = await connect_log(alice, execution)
    try:
        assert await receive_seqs(first, 1) == [1]
        await append(execution=execution, event="agent_output", text="seen live")
        assert await receive_seqs(first, 1) == [2]
    finally:
        await first.disconnect()
    for number in range(3):
        await append(execution=execution, event="agent_output", text=f"while away {number}")

    second = await connect_log(alice, execution, after=2)
    try:
        assert await receive_seqs(second, 3) == [3, 4, 5]
        await append(execution=execution, event="agent_output", text="after the reconnect")
        assert await receive_seqs(second, 1) == [6]
        await close_log(execution=execution)
        await assert_end(second, last_seq=6)
    finally:
        await second.disconnect()


async def test_a_line_the_layer_dropped_is_refilled_from_the_store_before_the_next(alice, execution, slow_poll):
    await append(execution=execution, event="agent_output", text="one")
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 1) == [1]
        assert await sync_to_async(write_unpublished)(execution, "dropped on the way") == 2
        await append(execution=execution, event="agent_output", text="three")
        refilled, live_one = await receive_lines(communicator, 2)
        assert (refilled["seq"], refilled["text"]) == (2, "dropped on the way")
        assert (live_one["seq"], live_one["text"]) == (3, "three")  # renumbered after the other process's line
        assert await communicator.receive_nothing(timeout=0.2)
    finally:
        await communicator.disconnect()


async def test_a_line_written_by_another_process_arrives_through_the_log_watch(alice, execution):
    await append(execution=execution, event="agent_output", text="one")
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 1) == [1]
        await sync_to_async(write_unpublished)(execution, "from a management command")
        message = await communicator.receive_json_from(timeout=execution_log.POLL_SECONDS * 2 + TIMEOUT)
        assert message["line"]["seq"] == 2
        assert message["line"]["text"] == "from a management command"
    finally:
        await communicator.disconnect()


async def test_a_close_by_another_process_is_noticed_from_the_database(alice, execution, monkeypatch):
    monkeypatch.setattr(execution_log, "POLL_SECONDS", 0.1)
    await append(execution=execution, event="agent_output", text="one")
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 1) == [1]
        await sync_to_async(write_unpublished)(execution, "last words")
        await sync_to_async(ExecutionLogFile.objects.filter(node_exec=execution).update)(status="closed", last_seq=2)
        assert await receive_seqs(communicator, 1) == [2]
        await assert_end(communicator, last_seq=2)
    finally:
        await communicator.disconnect()


async def test_a_closed_log_is_sent_whole_then_ends(alice, execution):
    for number in range(3):
        await append(execution=execution, event="agent_output", text=f"line {number}")
    await close_log(execution=execution)
    communicator = await connect_log(alice, execution, after=1)
    try:
        assert await receive_seqs(communicator, 2) == [2, 3]
        await assert_end(communicator, last_seq=3)
    finally:
        await communicator.disconnect()


async def test_lines_of_an_execution_that_starts_after_the_page_opened_arrive(alice, task, slow_poll):
    execution = await sync_to_async(new_execution)(task, status="queued")
    communicator = await connect_log(alice, execution)
    try:
        assert await communicator.receive_nothing(timeout=0.1)
        await sync_to_async(log_file_open)(execution=execution)
        await append(execution=execution, event="node_start")
        assert await receive_seqs(communicator, 1) == [1]
        await sync_to_async(write_unpublished)(execution, "dropped")
        await append(execution=execution, event="agent_output", text="three")
        assert await receive_seqs(communicator, 2) == [2, 3]
    finally:
        await communicator.disconnect()


async def test_an_execution_that_ended_without_a_log_ends_at_once(alice, task):
    execution = await sync_to_async(new_execution)(task, status="blocked")
    communicator = await connect_log(alice, execution)
    try:
        await assert_end(communicator, last_seq=0)
    finally:
        await communicator.disconnect()


async def send_store_as_batch(execution, *, unpublished: int, dropping: frozenset[int] = frozenset()) -> None:
    """Store ``unpublished`` lines only, then hand the layer every line of the log as the publisher
    packs a burst (the seqs in ``dropping`` left out, as a layer that lost them would)."""
    for number in range(unpublished):
        await sync_to_async(write_unpublished)(execution, f"unpublished {number}")
    lines = await sync_to_async(logs.log_read)(
        log_file=await sync_to_async(ExecutionLogFile.objects.get)(node_exec=execution)
    )
    messages = [{"type": "log.line", "line": line} for line in lines if line["seq"] not in dropping]
    (packed,) = live._layer_messages(messages)
    await get_channel_layer().group_send(live.node_exec_group(execution.pk), packed)


async def test_a_batch_from_the_layer_goes_out_as_one_frame_without_duplicates(alice, execution, slow_poll):
    await append(execution=execution, event="agent_output", text="one")
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 1) == [1]
        await send_store_as_batch(execution, unpublished=3)  # line 1, already sent, comes again
        frame = await communicator.receive_json_from(timeout=TIMEOUT)
        assert frame["type"] == "lines"
        assert [line["seq"] for line in frame["lines"]] == [2, 3, 4]
        assert await communicator.receive_nothing(timeout=0.2)
    finally:
        await communicator.disconnect()


async def test_a_batch_with_a_gap_is_filled_from_the_store_in_order(alice, execution, slow_poll):
    await append(execution=execution, event="agent_output", text="one")
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 1) == [1]
        await send_store_as_batch(execution, unpublished=4, dropping=frozenset({3}))
        assert await receive_seqs(communicator, 4) == [2, 3, 4, 5]
        assert await communicator.receive_nothing(timeout=0.2)
    finally:
        await communicator.disconnect()


async def test_a_burst_that_follows_the_last_line_sent_goes_out_as_the_publishers_frame(alice, execution, slow_poll):
    await append(execution=execution, event="agent_output", text="one")
    communicator = await connect_log(alice, execution)
    try:
        assert await receive_seqs(communicator, 1) == [1]
        for number in range(3):
            await sync_to_async(write_unpublished)(execution, f"unpublished {number}")
        lines = await sync_to_async(logs.log_read)(
            log_file=await sync_to_async(ExecutionLogFile.objects.get)(node_exec=execution), after=1
        )
        (packed,) = live._layer_messages([{"type": "log.line", "line": line} for line in lines])
        await get_channel_layer().group_send(live.node_exec_group(execution.pk), packed)

        assert await communicator.receive_from(timeout=TIMEOUT) == packed["frame"]
    finally:
        await communicator.disconnect()
