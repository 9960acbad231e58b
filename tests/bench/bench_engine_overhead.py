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
  see ``tests.bench.floor``.

Before the measured runs of the Celery mode the database is ANALYZEd, as a database in use would be:
pytest-django's fresh database has no planner statistics. The engine's agent is ``tests.bench.instant``,
installed in every engine process by ``tests.bench.instant_settings``. Each system warms up, then the
systems take turns, graph by graph (``tests.bench.by_turns``): ``REPETITIONS[graph]`` rounds in which
each of the four runs the graph once, so a drift of the machine moves them all alike; the page cache
is written out after every turn. A row of the table shows the median wall time and the waits of every
run pooled, each engine row's wall time over the floor's and the peer's; then the machine's load
average and each of its targets, met or not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from graphs.executors import executor_set
from tests.bench import floor
from tests.bench.by_turns import TurnTaker
from tests.bench.overhead import (
    CELERY,
    CELERY_CONCURRENCY,
    EMBEDDED,
    FLOOR,
    GRAPHS,
    PEER,
    Measurement,
    Row,
    combined,
    comparison,
    graph_run,
    targets,
)
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
EMBEDDED_TIMEOUT = 900.0
FLOOR_TIMEOUT = 120.0
PEER_VERSION = "3.9.1"
PEER_VENV = BASE_DIR / "var" / "bench-prefect-venv"
PEER_INSTALL_TIMEOUT = 900.0
PEER_TIMEOUT = 900.0


def _rows(system: str, measurements: list[Measurement]) -> list[Row]:
    return [
        Row(system=system, measurement=combined(graph, runs), runs=len(runs))
        for graph in GRAPHS
        if (runs := [m for m in measurements if m.graph == graph])
    ]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_engine_peer_and_floor_by_turns(task, tmp_path):
    """Every system runs each graph once per round, one after the other: all four see the same machine."""
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
    peer = _peer_start(tmp_path)
    embedded = _embedded_start(tmp_path)
    load_before = os.getloadavg()
    measured: dict[str, list[Measurement]] = {system: [] for system in (CELERY, EMBEDDED, PEER, FLOOR)}
    try:
        engine_worker.wait_ready()
        wait_until(lambda: " ready." in floor_worker.log_text(), timeout=60, alive=floor_worker.process,
                   message=lambda: floor_worker.log_text()[-4000:])
        peer.wait_ready(timeout=PEER_TIMEOUT)
        embedded.wait_ready(timeout=EMBEDDED_TIMEOUT)
        # Warm-up: worker processes, connections, imports, the peer's server.
        for graph in GRAPHS:
            graph_run(task=task, graph=graph)
            _floor_run(graph)
            peer.run(graph, timeout=PEER_TIMEOUT)
            embedded.run(graph, timeout=EMBEDDED_TIMEOUT)
        # A database in use has planner statistics; pytest-django's fresh one has none until
        # autovacuum gets to it, and without them PostgreSQL scans a run's rows where an index serves.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        turns = {
            CELERY: lambda graph: graph_run(task=task, graph=graph),
            FLOOR: _floor_run,
            PEER: lambda graph: _peer_measurement(peer.run(graph, timeout=PEER_TIMEOUT)),
            EMBEDDED: lambda graph: Measurement(**embedded.run(graph, timeout=EMBEDDED_TIMEOUT)),
        }
        for graph in RUNS:
            for system, turn in turns.items():
                measured[system].append(turn(graph))
                # What a system left in the page cache is written out before the next one's turn: the
                # kernel's write-back would otherwise land on that turn's commits (PostgreSQL's fsyncs).
                os.sync()
    finally:
        peer.stop()
        embedded.stop()
        engine_worker.stop()
        floor_worker.stop()
        executor_set(previous)
        broker_delete(engine_broker)
        broker_delete(floor_broker)
    rows = [row for system, measurements in measured.items() for row in _rows(system, measurements)]
    text, markdown = comparison(rows)
    print(
        f"\n\nOrchestration overhead, instant agent / no-op tasks ({os.cpu_count()} cores; load average"
        f" {', '.join(f'{value:.2f}' for value in load_before)} before, {os.getloadavg()[0]:.2f} after)\n{text}"
        f"\n\n{markdown}\n\nTargets:\n" + "\n".join(target.line() for target in targets(rows)) + "\n"
    )


def _peer_start(tmp_path: Path) -> TurnTaker:
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        # The ephemeral server would otherwise report usage to Prefect over the network.
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        # Its first start creates and migrates the server's database: over the default 20 s on a slow day.
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    }
    env.pop("PREFECT_API_URL", None)
    return TurnTaker([str(_peer_python()), str(Path(__file__).with_name("prefect_peer.py"))], cwd=tmp_path, env=env,
                     name="the peer")


def _peer_measurement(run: dict) -> Measurement:
    return Measurement.from_spans(graph=run["graph"], wall_s=run["wall_s"], spans=run["spans"])


def _embedded_start(tmp_path: Path) -> TurnTaker:
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="tests.bench.instant_settings", WORKGRAPH_VAR_DIR=str(tmp_path / "embedded"))
    return TurnTaker([sys.executable, "-m", "tests.bench.embedded"], cwd=BASE_DIR, env=env, name="the embedded mode")


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
