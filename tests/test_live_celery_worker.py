"""Live lines produced by a real Celery worker reach a browser socket over channels-redis.

The consumer's file poll is slowed past every timeout here, so the lines can only arrive through the
channel layer: the worker (another process) publishes, daphne's consumer relays.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from console.asgi import application
from console.consumers import execution_log
from graphs.engine import run_start
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile
from tests.clients import socket_headers
from tests.run_builders import node, planned_run

pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("live_sockets"),
]

TIMEOUT = 60


@sync_to_async
def log_is_open(execution) -> bool:
    return ExecutionLogFile.objects.filter(node_exec=execution, status=ExecutionLogFile.Status.OPEN).exists()


@pytest.fixture
def layer_only(monkeypatch):
    monkeypatch.setattr(execution_log, "POLL_SECONDS", 600)


async def test_a_workers_lines_stream_to_an_open_socket_without_gaps(alice, task, broker, workers, layer_only):
    run = await sync_to_async(planned_run)(task, {"nodes": [node("talk")], "edges": []})
    await sync_to_async(run_start)(run=run)
    execution = await sync_to_async(lambda: run.executions.get(node_id="talk"))()

    communicator = WebsocketCommunicator(
        application, f"/ws/node-executions/{execution.pk}/log/?after=0", headers=await socket_headers(alice)
    )
    try:
        assert (await communicator.connect(timeout=10))[0]
        worker = await sync_to_async(workers, thread_sensitive=False)("live", WORKGRAPH_OFFLINE_LINE_DELAY="0.1")
        await sync_to_async(worker.wait_ready, thread_sensitive=False)()
        seqs: list[int] = []
        while_running: list[int] = []
        while True:
            message = await communicator.receive_json_from(timeout=TIMEOUT)
            if message["type"] == "end":
                last_seq = message["last_seq"]
                break
            assert message["type"] in {"line", "lines"}, message
            arrived = [message["line"]["seq"]] if message["type"] == "line" else [x["seq"] for x in message["lines"]]
            seqs += arrived
            if await log_is_open(execution):
                while_running += arrived
    finally:
        await communicator.disconnect()

    assert seqs == list(range(1, last_seq + 1))
    # Lines arrived while the agent was still talking, not only from the file once the log closed.
    assert len(while_running) >= len(seqs) // 2, (while_running, seqs)
    log_file = await sync_to_async(lambda: execution.log_file)()
    written = await sync_to_async(log_read)(log_file=log_file)
    assert [line["seq"] for line in written] == seqs
    assert sum(1 for line in written if line["event"] == "agent_output") >= 3
