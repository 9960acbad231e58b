"""Orchestration overhead with an agent that answers at once, side by side with a peer and a floor.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_engine_overhead.py -o python_files='bench_*.py' -s

The same graphs (``tests.bench.overhead``: a 40-node chain, a 500-node fan-out/fan-in) on four systems:

- this engine on Celery + Redis: this process publishes into the test database (PostgreSQL) and one
  real ``celery worker`` with two prefork processes, on a queue of its own, runs the nodes;
- this engine embedded: a fresh process on a SQLite file with the in-process ``ThreadExecutor``
  (``WORKGRAPH_EMBEDDED_WORKERS`` threads), see ``tests.bench.embedded``;
- the peer, Prefect 3.9.1 on its local ephemeral server, in a virtualenv of its own that this module
  creates under ``var/`` (from PyPI, once), see ``tests.bench.prefect_peer``;
- the floor, a bare Celery chain and chord of no-op tasks on the same Redis, two prefork processes,
  see ``tests.bench.floor``; its runs take turns with the Celery mode's, so a drift of the machine
  moves both alike.

Before the measured runs of the Celery mode the database is ANALYZEd, as a database in use would be:
pytest-django's fresh database has no planner statistics. The engine's agent is ``tests.bench.instant``,
installed in every engine process by ``tests.bench.instant_settings``. Each system warms up, then runs
each graph ``REPETITIONS[graph]`` times (the Celery mode and the floor by turns, the others in a row);
a row of the table shows the median wall time and the
waits of every run pooled. The table (plain and markdown) is printed once every system has run, with each
engine row's wall time over the floor's and the peer's, and the machine's load average.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from graphs.jobs import executor_set
from tests.bench import floor
from tests.bench.overhead import FLOOR, GRAPHS, PEER, Measurement, Row, combined, comparison, graph_run
from tests.celery_worker import (
    BASE_DIR,
    Worker,
    broker_create,
    broker_delete,
    wait_until,
    worker_env,
    worker_start,
)

# A run moves with whatever else the machine does: more of them steady the median. A chain run takes
# about a second, a fan-out run ten.
REPETITIONS = {"chain40": 9, "fanout500": 5}
# Every repetition of a graph, then the next graph: no chain runs in the wake of a fan-out.
RUNS = [graph for graph in GRAPHS for _ in range(REPETITIONS[graph])]
CELERY_CONCURRENCY = 2
EMBEDDED_TIMEOUT = 900.0
FLOOR_TIMEOUT = 120.0
PEER_VERSION = "3.9.1"
PEER_VENV = BASE_DIR / "var" / "bench-prefect-venv"
PEER_INSTALL_TIMEOUT = 900.0
PEER_TIMEOUT = 900.0


# Session-scoped: pytest-django runs transactional tests apart from the others, so this module's
# tests need not run one after the other; the table is printed once all of them have.
@pytest.fixture(scope="session")
def results() -> Iterator[list[Row]]:
    rows: list[Row] = []
    load_before = os.getloadavg()
    yield rows
    text, markdown = comparison(rows)
    load = ", ".join(f"{value:.2f}" for value in load_before)
    print(
        f"\n\nOrchestration overhead, instant agent / no-op tasks ({os.cpu_count()} cores; load average"
        f" {load} before, {os.getloadavg()[0]:.2f} after)\n{text}\n\n{markdown}\n"
    )


def _rows(system: str, measurements: list[Measurement]) -> list[Row]:
    return [
        Row(system=system, measurement=combined(graph, runs), runs=len(runs))
        for graph in GRAPHS
        if (runs := [m for m in measurements if m.graph == graph])
    ]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_engine_on_celery_and_redis_by_turns_with_the_floor(task, tmp_path, results):
    """The engine's Celery mode and the bare-Celery floor, one run of each by turns.

    This machine's speed drifts by ±15% within minutes; measured one after the other, a drift between
    the two systems moved their ratio by as much. Run by turns, both see the same machine.
    """
    engine_broker = broker_create(prefix="workgraph-bench")
    floor_broker = broker_create(prefix="workgraph-floor")
    previous = executor_set(engine_broker.executor())
    floor.floor_use(redis_url=floor_broker.url, queue=floor_broker.queue)
    engine_worker = worker_start(
        name="bench",
        concurrency=CELERY_CONCURRENCY,
        log_dir=tmp_path,
        env=worker_env(broker=engine_broker, settings_module="tests.bench.instant_settings"),
    )
    floor_worker = _floor_worker_start(redis_url=floor_broker.url, queue=floor_broker.queue, log_dir=tmp_path)
    try:
        engine_worker.wait_ready()
        wait_until(lambda: " ready." in floor_worker.log_text(), timeout=60, alive=floor_worker.process,
                   message=lambda: floor_worker.log_text()[-4000:])
        # Warm-up: worker processes, connections, imports.
        graph_run(task=task, graph="chain40")
        graph_run(task=task, graph="fanout500")
        _floor_run("chain40")
        # A database in use has planner statistics; pytest-django's fresh one has none until
        # autovacuum gets to it, and without them PostgreSQL scans a run's rows where an index serves.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        engine_runs, floor_runs = [], []
        for graph in RUNS:
            engine_runs.append(graph_run(task=task, graph=graph))
            floor_runs.append(_floor_run(graph))
    finally:
        engine_worker.stop()
        floor_worker.stop()
        executor_set(previous)
        broker_delete(engine_broker)
        broker_delete(floor_broker)
    results.extend(_rows(f"engine, Celery + Redis ({CELERY_CONCURRENCY} processes)", engine_runs))
    results.extend(_rows(FLOOR, floor_runs))


def test_engine_embedded(tmp_path, results):
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="tests.bench.instant_settings", WORKGRAPH_VAR_DIR=str(tmp_path))
    completed = subprocess.run(
        [sys.executable, "-m", "tests.bench.embedded", "chain40", *RUNS],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=EMBEDDED_TIMEOUT, check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    measurements = [Measurement(**json.loads(line)) for line in completed.stdout.splitlines()][1:]  # warm-up
    results.extend(_rows(f"engine, embedded (SQLite, {settings.WORKGRAPH_EMBEDDED_WORKERS} threads)", measurements))


def test_peer_prefect(tmp_path, results):
    python = _peer_python()
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        # The ephemeral server would otherwise report usage to Prefect over the network.
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        # Its first start creates and migrates the server's database: over the default 20 s on a slow day.
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    }
    env.pop("PREFECT_API_URL", None)
    completed = subprocess.run(
        [str(python), str(Path(__file__).with_name("prefect_peer.py")), *RUNS],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=PEER_TIMEOUT, check=False,
    )
    lines = [line.removeprefix("BENCH ") for line in completed.stdout.splitlines() if line.startswith("BENCH ")]
    assert completed.returncode == 0 and lines, (completed.stdout + completed.stderr)[-4000:]
    measurements = [
        Measurement.from_spans(graph=run["graph"], wall_s=run["wall_s"], spans=run["spans"])
        for run in map(json.loads, lines)
    ]
    results.extend(_rows(PEER, measurements))


def _floor_worker_start(*, redis_url: str, queue: str, log_dir: Path) -> Worker:
    name = f"floor-{uuid.uuid4().hex[:8]}"
    log_path = log_dir / f"{name}.log"
    argv = [
        sys.executable, "-m", "celery", "-A", "tests.bench.floor", "worker", "-n", f"{name}@%h", "-l", "INFO",
        "--pool=prefork", f"--concurrency={CELERY_CONCURRENCY}", "--without-gossip", "--without-mingle",
    ]
    env = {**os.environ, "FLOOR_REDIS_URL": redis_url, "FLOOR_QUEUE": queue}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    return Worker(name=name, process=process, log_path=log_path)


def _floor_run(graph: str) -> Measurement:
    handed_over = time.time()
    records = floor.SIGNATURES[graph]().apply_async().get(timeout=FLOOR_TIMEOUT)
    wall = time.time() - handed_over
    return Measurement.from_spans(graph=graph, wall_s=wall, spans={name: (start, end) for name, start, end in records})


def _peer_python() -> Path:
    """The Prefect virtualenv's interpreter, creating the virtualenv (from PyPI) when it is missing or stale."""
    python = PEER_VENV / "bin" / "python"
    check = [str(python), "-c", f"import prefect, sys; sys.exit(prefect.__version__ != {PEER_VERSION!r})"]
    if python.exists() and subprocess.run(check, capture_output=True, timeout=120, check=False).returncode == 0:
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(PEER_VENV)], check=True, timeout=120)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"prefect=={PEER_VERSION}"],
        capture_output=True, text=True, timeout=PEER_INSTALL_TIMEOUT, check=False,
    )
    if install.returncode != 0:
        pytest.skip(f"could not install prefect=={PEER_VERSION} from PyPI: {install.stderr[-2000:]}")
    return python
