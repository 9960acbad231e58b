"""The worker-side publisher speaks channels-redis's pub/sub protocol: what it sends straight to Redis
reaches the members of a group of the real layer, in order, however the lines were packed."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.layers import get_channel_layer
from channels_redis.pubsub import RedisPubSubChannelLayer

from graphs.logs import live

pytestmark = [pytest.mark.services, pytest.mark.usefixtures("live_sockets")]

TIMEOUT = 10


@pytest.fixture
def pubsub_layer(settings) -> RedisPubSubChannelLayer:
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [settings.REDIS_URL], "prefix": "workgraph-test-publisher"},
        }
    }
    layer = get_channel_layer()
    assert isinstance(layer, RedisPubSubChannelLayer)
    return layer


def carried_seqs(message: dict) -> list[int]:
    """The seqs of the log lines a layer message carries, however the publisher packed them."""
    if message["type"] == "log.line":
        return [message["line"]["seq"]]
    if message["type"] == "log.lines":
        return [line["seq"] for line in json.loads(message["frame"])["lines"]]
    return []


async def test_lines_published_by_a_worker_reach_the_groups_members_in_order(pubsub_layer):
    channel = await pubsub_layer.new_channel()
    await pubsub_layer.group_add("node_exec.a", channel)
    await pubsub_layer.group_add("run.b", channel)
    outbox = live._outbox_current()
    assert isinstance(outbox, live._RedisPubSubOutbox)

    live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": 1}})
    first = await asyncio.wait_for(pubsub_layer.receive(channel), TIMEOUT)
    # Lines that come while a send is in flight, or right after one, travel together.
    for seq in (2, 3, 4):
        live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": seq}})
    live.live_publish(group="run.b", message={"type": "run.event", "event": {"event": "progress"}})

    received = [first]
    while sum(len(carried_seqs(m)) for m in received) < 4 or len(received) < 3:
        received.append(await asyncio.wait_for(pubsub_layer.receive(channel), TIMEOUT))
    assert [seq for m in received for seq in carried_seqs(m)] == [1, 2, 3, 4]
    assert {"type": "run.event", "event": {"event": "progress"}} in received
    await pubsub_layer.flush()


async def test_an_unreachable_redis_costs_the_caller_nothing(pubsub_layer, settings):
    settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] = ["redis://127.0.0.1:1/0"]
    settings.CHANNEL_LAYERS = {**settings.CHANNEL_LAYERS}
    outbox = live._outbox_current()
    assert isinstance(outbox, live._RedisPubSubOutbox)
    for seq in range(1, 1001):  # each returns at once; the sender thread meets the refused connection
        live.live_publish(group="node_exec.a", message={"type": "log.line", "line": {"seq": seq}})
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while outbox._draining and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    assert not outbox._draining  # every message was taken and the failed send did not wedge the sender
