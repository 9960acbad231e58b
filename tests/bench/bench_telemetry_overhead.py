"""What traces and metrics cost a run: the 500-node fan-out's wall time with both on against both off.

Run on demand (``make bench`` runs every ``bench_*.py``)::

    .venv/bin/python -m pytest tests/bench/bench_telemetry_overhead.py -o python_files='bench_*.py' -s

Two embedded-mode processes (``tests.bench.embedded``: a SQLite file of their own, the in-process
``ThreadExecutor``, the instant agent), the same in every way but their environment:

- off: no ``OTEL_*`` endpoint, no metrics token;
- on: ``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at an Arize Phoenix started here (``tests.phoenix_server``),
  the metrics token set.

They take turns (``tests.bench.by_turns``): after a warm-up each runs the fan-out once per round, so a
drift of the machine moves both alike; a turn ends only once its process is quiet again, its spans sent.
The table gives each side's median and p95 wall time and the ratio of the medians (target: under 1.05).
At the end Phoenix is asked how many spans it holds: the traces really went out.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from tests.bench.by_turns import TurnTaker
from tests.bench.report import load_average, p95, tables
from tests.celery_worker import BASE_DIR
from tests.phoenix_server import phoenix_start

GRAPH = "fanout500"
REPETITIONS = 5
TIMEOUT = 900.0
TARGET_RATIO = 1.05


def _embedded(tmp_path: Path, name: str, **extra: str) -> TurnTaker:
    env = {key: value for key, value in os.environ.items()
           if key not in {"DATABASE_URL", "REDIS_URL", "WORKGRAPH_METRICS_TOKEN"} and not key.startswith("OTEL_")}
    env.update(DJANGO_SETTINGS_MODULE="tests.bench.instant_settings", WORKGRAPH_VAR_DIR=str(tmp_path / name), **extra)
    return TurnTaker([sys.executable, "-m", "tests.bench.embedded"], cwd=BASE_DIR, env=env, name=f"tracing {name}")


def test_tracing_and_metrics_on_against_off_by_turns(tmp_path):
    phoenix = phoenix_start(tmp_path / "phoenix")
    systems = {
        "off": _embedded(tmp_path, "off"),
        "on": _embedded(tmp_path, "on", OTEL_EXPORTER_OTLP_ENDPOINT=phoenix.url, OTEL_SERVICE_NAME="workgraph-bench",
                        WORKGRAPH_METRICS_TOKEN="bench-token"),
    }
    walls: dict[str, list[float]] = {name: [] for name in systems}
    load_before = load_average()
    try:
        for system in systems.values():
            system.wait_ready(timeout=TIMEOUT)
            system.run(GRAPH, timeout=TIMEOUT)  # warm-up: imports, connections, the exporter's first batch
        for _ in range(REPETITIONS):
            for name, system in systems.items():
                walls[name].append(system.run(GRAPH, timeout=TIMEOUT)["wall_s"])
                os.sync()
    finally:
        for system in systems.values():
            system.stop()
    spans = len(phoenix.spans())
    phoenix.stop()

    median = {name: statistics.median(values) for name, values in walls.items()}
    ratio = median["on"] / median["off"]
    rows = [[name, f"{median[name]:.2f}", f"{p95(values):.2f}", str(len(values))] for name, values in walls.items()]
    print()
    print(tables(["traces and metrics", "wall median (s)", "wall p95 (s)", "runs"], rows))
    print(f"\non / off (medians): {ratio:.3f} (target under {TARGET_RATIO}); spans in Phoenix: {spans}")
    print(f"load average before: {load_before}; after: {load_average()}")
    assert spans >= (1 + REPETITIONS) * 500, "the traced runs' spans did not all reach Phoenix"
