"""What traces and metrics cost a run: the 500-node fan-out's wall time with both on against both off.

Run on demand (``make bench`` runs every ``bench_*.py``)::

    .venv/bin/python -m pytest tests/bench/bench_telemetry_overhead.py -o python_files='bench_*.py' -s

Two embedded-mode processes (``tests.bench.embedded``: a SQLite file of their own, the in-process
``ThreadExecutor``, the instant agent), the same in every way but their environment:

- off: no ``OTEL_*`` endpoint, no metrics token;
- on: ``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at a sink in this process (``tests.bench.otlp_sink``: it
  answers ``POST /v1/traces`` at once and keeps the bodies), the metrics token set. The measurement is of
  the console: a receiver that stores and indexes the spans (Phoenix, a collector) belongs on a machine
  of its own, not on the cores it would take from the console.

They take turns (``tests.bench.by_turns``), the one to go first changing every round, so a drift of the
machine moves both alike; a turn ends only once its process is quiet again, its spans sent. The table
gives each side's median and p95 wall time — ``run_start`` to the run's end — and its median turn,
which holds what the process did after the run (the "on" side makes and sends its spans once it is
quiet); then the ratio of the wall medians (target: under 1.05). At the end the sink's spans are
counted: the traces really went out.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from tests.bench.by_turns import TurnTaker
from tests.bench.otlp_sink import otlp_sink_start
from tests.bench.report import load_average, p95, tables
from tests.celery_worker import BASE_DIR

GRAPH = "fanout500"
REPETITIONS = 8
TIMEOUT = 900.0
TARGET_RATIO = 1.05
# Each run: an attempt's span and its agent call's for each of the 500 nodes, and the run's root.
SPANS_PER_RUN = 1001


def _embedded(tmp_path: Path, name: str, **extra: str) -> TurnTaker:
    env = {key: value for key, value in os.environ.items()
           if key not in {"DATABASE_URL", "REDIS_URL", "WORKGRAPH_METRICS_TOKEN"} and not key.startswith("OTEL_")}
    env.update(DJANGO_SETTINGS_MODULE="tests.bench.instant_settings", WORKGRAPH_VAR_DIR=str(tmp_path / name), **extra)
    return TurnTaker([sys.executable, "-m", "tests.bench.embedded"], cwd=BASE_DIR, env=env, name=f"tracing {name}")


def test_tracing_and_metrics_on_against_off_by_turns(tmp_path):
    sink = otlp_sink_start()
    systems = {
        "off": _embedded(tmp_path, "off"),
        "on": _embedded(tmp_path, "on", OTEL_EXPORTER_OTLP_ENDPOINT=sink.url, OTEL_SERVICE_NAME="workgraph-bench",
                        WORKGRAPH_METRICS_TOKEN="bench-token"),
    }
    walls: dict[str, list[float]] = {name: [] for name in systems}
    turns: dict[str, list[float]] = {name: [] for name in systems}
    load_before = load_average()
    try:
        for system in systems.values():
            system.wait_ready(timeout=TIMEOUT)
            system.run(GRAPH, timeout=TIMEOUT)  # warm-up: imports, connections, the exporter's first batch
        for repetition in range(REPETITIONS):
            order = list(systems) if repetition % 2 == 0 else list(reversed(systems))
            for name in order:
                started = time.monotonic()
                walls[name].append(systems[name].run(GRAPH, timeout=TIMEOUT)["wall_s"])
                turns[name].append(time.monotonic() - started)
                os.sync()
    finally:
        for system in systems.values():
            system.stop()
    spans, sent = sink.spans(), sink.received_bytes
    sink.stop()

    median = {name: statistics.median(values) for name, values in walls.items()}
    ratio = median["on"] / median["off"]
    rows = [[name, f"{median[name]:.2f}", f"{p95(values):.2f}", f"{statistics.median(turns[name]):.2f}",
             str(len(values))] for name, values in walls.items()]
    print()
    print(tables(["traces and metrics", "wall median (s)", "wall p95 (s)", "turn median (s)", "runs"], rows))
    verdict = "met" if ratio < TARGET_RATIO else "NOT met"
    print(f"\non / off (wall medians): {ratio:.3f} (target under {TARGET_RATIO}: {verdict})")
    print(f"spans received: {spans} in {sent / 1e6:.1f} MB")
    print(f"load average before: {load_before}; after: {load_average()}")
    assert spans >= (1 + REPETITIONS) * SPANS_PER_RUN, "the traced runs' spans did not all reach the sink"
