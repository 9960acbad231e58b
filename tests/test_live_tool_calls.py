"""A node's tool call reaches the browsers watching its log while the Claude call still runs: the line is
relayed as the CLI prints it, not when the call or the attempt ends. Runs over whichever channel layer
the settings pick (in-memory by default, channels-redis under ``CI=true``)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection

from console.asgi import application
from graphs.engine import run_start
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests.clients import socket_headers
from tests.run_builders import node, planned_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live_sockets", "sandbox_writable")]

TIMEOUT = 15


async def lines_until(communicator: WebsocketCommunicator, event: str) -> list[dict]:
    """Every line the socket sends up to and including the first ``event`` line."""
    received: list[dict] = []
    while not any(line["event"] == event for line in received):
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert message["type"] in {"line", "lines"}, message
        received += [message["line"]] if message["type"] == "line" else message["lines"]
    return received


async def test_a_tool_call_reaches_a_listener_while_the_claude_call_still_runs(
    alice, task, claude_cli, inline_executor, monkeypatch, tmp_path
):
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_CLAUDE_GATE", str(gate))
    claude_cli("gated_tool_call.json")
    run = await sync_to_async(planned_run)(task, {"nodes": [node("tests")], "edges": []})
    await sync_to_async(run_start)(run=run)
    execution = await WorkNodeExecution.objects.aget(run=run, node_id="tests")
    communicator = WebsocketCommunicator(application, f"/ws/node-executions/{execution.pk}/log/",
                                         headers=await socket_headers(alice))
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected

    def work() -> None:
        try:
            inline_executor.drain()
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    try:
        before_gate = await lines_until(communicator, "tool_call")
        tool_call = before_gate[-1]
        assert (tool_call["name"], tool_call["tool_use_id"]) == ("Bash", "toolu_06Pytest")
        assert json.loads(tool_call["input"])["command"] == "pytest -q"
        assert (await WorkNodeExecution.objects.aget(pk=execution.pk)).status == "running"
        # The tool is still running: nothing more comes, and its result least of all.
        assert await communicator.receive_nothing(timeout=0.5)
        assert "tool_result" not in [line["event"] for line in before_gate]

        gate.touch()
        after_gate = await lines_until(communicator, "node_finished")
        [tool_result] = [line for line in after_gate if line["event"] == "tool_result"]
        assert (tool_result["tool_use_id"], tool_result["content"]) == ("toolu_06Pytest", "3 passed in 0.41s\n")
        assert tool_result["seq"] > tool_call["seq"]
        assert "agent_result" in [line["event"] for line in after_gate]
        end = await communicator.receive_json_from(timeout=TIMEOUT)
        assert end == {"type": "end", "last_seq": after_gate[-1]["seq"]}
    finally:
        gate.touch()
        await communicator.disconnect()
        await asyncio.to_thread(worker.join, 30)
    assert not worker.is_alive()
    assert (await WorkGraphRun.objects.aget(pk=run.pk)).status == "succeeded"
