"""With the trace receiver down a run goes on as ever: its spans are dropped, counted and logged."""

from __future__ import annotations

import logging

import pytest

from graphs.engine import run_start
from graphs.telemetry.export import spans_dropped, telemetry_flush, telemetry_stop
from tests.celery_worker import wait_until
from tests.redis_server import free_port
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver_down(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    telemetry_stop()
    yield
    telemetry_stop()


def test_a_run_succeeds_while_its_spans_are_dropped_and_counted(receiver_down, task, inline_executor, caplog):
    before = spans_dropped()
    run = planned_run(task, {"nodes": [node("a"), node("b", "a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    assert run.status == "succeeded"

    with caplog.at_level(logging.WARNING, logger="graphs.telemetry"):
        telemetry_flush(30)
        wait_until(lambda: spans_dropped() > before, timeout=30, message=lambda: "no span counted as dropped")
    assert any("dropped" in record.getMessage() for record in caplog.records)
    run.refresh_from_db()
    assert run.trace_id == run.run_id.hex


def test_nothing_is_exported_when_the_sdk_is_disabled(receiver_down, monkeypatch, task, inline_executor):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    assert (run.status, run.trace_id) == ("succeeded", "")
