"""Spans are made off the engine's path: the exporter's thread lets attempts wait while its process is
busy, takes them once it is quiet, at the latest after ``MAX_DELAY_SECONDS`` or when a flush asks, and
reads any number of them with the same three queries."""

from __future__ import annotations

import itertools
import queue
import time
from types import SimpleNamespace

import pytest

from graphs.engine import run_start
from graphs.models import PLANNING_NODE_ID
from graphs.telemetry import export
from graphs.telemetry.export import _Exporter, _specs
from tests.run_builders import node, planned_run


def _waiting(*items) -> SimpleNamespace:
    """What ``_gather`` reads of an exporter: its queue, holding ``items``."""
    waiting: queue.Queue = queue.Queue(maxsize=100)
    for item in items:
        waiting.put(item)
    return SimpleNamespace(queue=waiting)


@pytest.fixture
def busy(monkeypatch):
    """The process uses (or waits for) a whole core from now on, as an engine running nodes does."""
    clock = itertools.count(step=10.0)
    monkeypatch.setattr(export, "_cpu_demand", lambda: next(clock))


@pytest.fixture
def quiet(monkeypatch):
    monkeypatch.setattr(export, "_cpu_demand", lambda: 1.0)


def test_the_cpu_a_process_uses_or_waits_for_grows_as_it_works():
    before = export._cpu_demand()
    spent = time.process_time() + 0.05
    while time.process_time() < spent:
        pass
    assert export._cpu_demand() - before >= 0.05


def test_a_quiet_process_makes_its_spans_after_one_window(quiet):
    exporter = _waiting(("attempt", 1), ("attempt", 2))
    started = time.monotonic()
    assert _Exporter._gather(exporter) == [("attempt", 1), ("attempt", 2)]
    assert time.monotonic() - started < export.MAX_DELAY_SECONDS


def test_a_busy_process_keeps_its_ids_until_the_longest_delay(busy, monkeypatch):
    monkeypatch.setattr(export, "MAX_DELAY_SECONDS", 0.6)
    exporter = _waiting(("attempt", 1), ("run", 9))
    started = time.monotonic()
    assert _Exporter._gather(exporter) == [("attempt", 1), ("run", 9)]
    assert time.monotonic() - started >= 0.6


def test_a_flush_takes_the_ids_of_a_busy_process_at_once(busy):
    exporter = _waiting(("attempt", 1), ("flush", None), ("attempt", 2))
    started = time.monotonic()
    assert _Exporter._gather(exporter) == [("attempt", 1), ("flush", None), ("attempt", 2)]
    assert time.monotonic() - started < export.MAX_DELAY_SECONDS


@pytest.mark.django_db
def test_any_number_of_attempts_and_their_runs_are_read_with_three_queries(
    task, inline_executor, monkeypatch, django_assert_num_queries
):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    run = planned_run(task, {"nodes": [node("a"), node("b", "a"), node("c", "a"), node("d", "b", "c")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    attempts = list(run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).values_list("pk", flat=True))
    items = [("attempt", pk) for pk in attempts] + [("run", run.pk)]
    _specs(items[:1])  # the run's trace id is stored once, then known to the process

    with django_assert_num_queries(3):
        made = _specs(items)

    names = sorted(specs[0].name for specs, _ in made)
    assert names == ["node a", "node b", "node c", "node d", f"run {task.title}"[:200]]
    assert {trace_id for _, trace_id in made} == {run.run_id.hex}
    assert all(len(specs) >= 2 for specs, _ in made if specs[0].name.startswith("node"))  # with its agent call
