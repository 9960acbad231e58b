"""Engine overhead per node with an agent that answers at once: a 40-node chain and a 500-node fan-out.

Run on demand (the normal suite does not collect ``bench_*.py``)::

    .venv/bin/python -m pytest tests/bench/bench_engine_overhead.py -o python_files='bench_*.py' -s

Two modes, each in the environment that defines it:

- Celery + Redis: this process publishes into the test database (PostgreSQL) and one real
  ``celery worker`` with two prefork processes, on a queue of its own, runs the nodes;
- embedded: a fresh process on a SQLite file with the in-process ``ThreadExecutor``
  (``WORKGRAPH_EMBEDDED_WORKERS`` threads), see ``tests.bench.embedded``.

The agent is ``tests.bench.instant``, installed in every one of those processes by
``tests.bench.instant_settings``. The table is printed once both modes have run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from django.conf import settings

from graphs.jobs import executor_set
from tests.bench.overhead import GRAPHS, Measurement, graph_run, table
from tests.celery_worker import BASE_DIR, broker_create, broker_delete, worker_env, worker_start

CELERY_CONCURRENCY = 2
EMBEDDED_TIMEOUT = 900.0


@pytest.fixture(scope="module")
def results() -> Iterator[list[tuple[str, Measurement]]]:
    rows: list[tuple[str, Measurement]] = []
    yield rows
    print("\n\nEngine overhead per node (instant agent)\n" + table(rows) + "\n")


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_engine_overhead_on_celery_and_redis(task, tmp_path, results):
    broker = broker_create(prefix="workgraph-bench")
    previous = executor_set(broker.executor())
    worker = worker_start(
        name="bench",
        concurrency=CELERY_CONCURRENCY,
        log_dir=tmp_path,
        env=worker_env(broker=broker, settings_module="tests.bench.instant_settings"),
    )
    try:
        worker.wait_ready()
        for graph in GRAPHS:
            results.append(
                (f"celery+redis, {CELERY_CONCURRENCY} worker processes", graph_run(task=task, graph=graph))
            )
    finally:
        worker.stop()
        executor_set(previous)
        broker_delete(broker)


def test_engine_overhead_embedded(tmp_path, results):
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="tests.bench.instant_settings", WORKGRAPH_VAR_DIR=str(tmp_path))
    completed = subprocess.run(
        [sys.executable, "-m", "tests.bench.embedded", *GRAPHS],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=EMBEDDED_TIMEOUT,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    mode = f"embedded sqlite, {settings.WORKGRAPH_EMBEDDED_WORKERS} threads"
    for line in completed.stdout.splitlines():
        results.append((mode, Measurement(**json.loads(line))))
