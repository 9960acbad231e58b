"""The live publisher: a burst for one group travels as one frame, other messages as a batch, a steady
stream is coalesced, and neither a failing or stalled layer nor a failing listener reaches the caller.

These run over whichever channel layer the settings pick: in-memory by default, channels-redis under
``CI=true`` (``REDIS_URL`` set).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.layers import InMemoryChannelLayer

from graphs.logs import live, writer
from graphs.logs import store as logs
from graphs.logs.store import log_append, log_file_open
from graphs.models import ExecutionLogFile
from tests import factories

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets")]


@pytest.fixture
def execution(task):
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    return execution


class RecordingLayer(InMemoryChannelLayer):
    """An in-process layer that records what is sent, and can be told to fail or to hang."""

    def __init__(self, *, behaviour: str = "deliver") -> None:
        super().__init__()
        self.behaviour = behaviour
        self.sent: list[tuple[str, dict]] = []
        self.called = asyncio.Event()

    async def group_send(self, group: str, message: dict) -> None:
        self.sent.append((group, message))
        self.called.set()
        if self.behaviour == "fail":
            raise ConnectionError("the layer is down")
        if self.behaviour == "hang":
            await asyncio.Event().wait()


@pytest.fixture
def recording_layer(monkeypatch):
    def install(behaviour: str = "deliver") -> RecordingLayer:
        layer = RecordingLayer(behaviour=behaviour)
        monkeypatch.setattr(live, "get_channel_layer", lambda: layer)
        live.live_consumer_loop_register(asyncio.get_running_loop())
        return layer

    return install


def frame_seqs(message: dict) -> list[int]:
    """The seqs of the lines a ``log.lines`` message's frame carries."""
    assert message["type"] == "log.lines", message
    return [line["seq"] for line in json.loads(message["frame"])["lines"]]


async def test_a_burst_for_one_group_travels_as_one_frame_made_once_in_order(recording_layer):
    layer = recording_layer()
    for seq in (1, 2, 3):
        live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": seq}})
    live.live_publish(group="run.b", message={"type": "run.event", "event": {"event": "progress"}})
    while len(layer.sent) < 2:
        await layer.called.wait()
        layer.called.clear()
    sent = dict(layer.sent)
    assert frame_seqs(sent["node_exec.a"]) == [1, 2, 3]
    assert (sent["node_exec.a"]["seqs"], sent["node_exec.a"]["contiguous"]) == ([1, 3], True)
    assert sent["run.b"] == {"type": "run.event", "event": {"event": "progress"}}


async def test_other_messages_sent_together_travel_as_a_batch_in_order(recording_layer):
    layer = recording_layer()
    live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": 1}})
    live.live_publish(group="node_exec.a", message={"type": "log.closed", "last_seq": 1})
    await layer.called.wait()
    (_, batch), = layer.sent
    assert batch == {"type": "live.batch", "messages": [
        {"type": "log.line", "line": {"seq": 1}}, {"type": "log.closed", "last_seq": 1},
    ]}


async def test_a_steady_stream_is_coalesced_and_a_lone_line_is_not_held(recording_layer, monkeypatch):
    # The stream's gaps widened, so lines a millisecond apart stay a stream however late a loaded machine
    # wakes this test between them; what is tested is the rule, not the machine's pace.
    monkeypatch.setattr(live, "BURST_GAP_SECONDS", 0.25)
    monkeypatch.setattr(live, "COALESCE_SECONDS", 0.25)
    layer = recording_layer()
    live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": 1}})
    await layer.called.wait()
    layer.called.clear()
    # Lines a millisecond apart, right after a send: they wait for each other and travel together.
    for seq in (2, 3, 4):
        live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": seq}})
        await asyncio.sleep(0.001)  # not a wait for anything: the millisecond apart is the stream under test
    while sum(1 for _, m in layer.sent if m.get("type") == "log.lines") < 1:
        await layer.called.wait()
        layer.called.clear()
    assert layer.sent[0][1] == {"type": "log.line", "line": {"seq": 1}}
    assert frame_seqs(layer.sent[1][1]) == [2, 3, 4]
    # After a quiet moment a line goes at once, alone. The quiet is what is tested: the publisher tells
    # a stream from a lone line by the time since its last send, so only time passing can make it.
    await asyncio.sleep(live.BURST_GAP_SECONDS * 2)
    live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": 5}})
    await layer.called.wait()
    assert layer.sent[-1][1] == {"type": "log.line", "line": {"seq": 5}}


async def test_a_failing_layer_never_raises_into_the_caller(recording_layer):
    layer = recording_layer("fail")
    live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": 1}})
    await layer.called.wait()
    layer.called.clear()
    live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": 2}})
    await layer.called.wait()
    assert [m["line"]["seq"] for _, m in layer.sent] == [1, 2]


async def test_a_stalled_layer_never_blocks_the_caller_and_drops_the_oldest(recording_layer, monkeypatch):
    monkeypatch.setattr(live, "MAX_PENDING", 5)
    monkeypatch.setattr(live, "SEND_TIMEOUT_SECONDS", 0.2)
    layer = recording_layer("hang")
    live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": 0}})
    await layer.called.wait()
    layer.called.clear()
    for seq in range(1, 21):  # returns at once although the first send is stuck
        live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": seq}})
    await layer.called.wait()  # the stuck send timed out; the survivors go next
    _, batch = layer.sent[1]
    assert frame_seqs(batch) == [16, 17, 18, 19, 20]


def test_a_failing_live_listener_does_not_fail_the_append(execution, monkeypatch):
    def broken(*_):
        raise RuntimeError("publisher bug")

    monkeypatch.setattr(writer, "_listeners", [broken])
    line = log_append(execution=execution, event="agent_output", text="still written")
    assert logs.log_writes_wait(timeout=10)  # the writer stored the line and told the broken listener
    assert logs.log_read(log_file=ExecutionLogFile.objects.get(node_exec=execution))[-1] == line
