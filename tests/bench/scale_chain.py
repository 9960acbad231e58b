"""The 40-node chain in the Celery mode against bare Celery, in three sittings.

A sitting starts one engine worker and one floor worker (two prefork processes each, their own
queues on the same Redis), warms both up, ANALYZEs the database, then lets them take turns: ``ROUNDS``
rounds in which each runs the chain once, so both sides see the same load. Its figure is the engine's
median wall time over the floor's. The workers stop at the end of a sitting; the next starts fresh.

``rows()`` gives the table rows of ``tests/bench/bench_scale.py``; ``bench_chain_floor.py`` runs it alone.
It must be called from a test that commits (``django_db(transaction=True)``): the workers share its
database.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.db import connection

from graphs.executors import executor_set
from graphs.models import Task
from tests import factories
from tests.bench import floor
from tests.bench.overhead import CELERY_CONCURRENCY, graph_run
from tests.celery_worker import BASE_DIR, Worker, broker_create, broker_delete, wait_until, worker_env, worker_start

GRAPH = "chain40"
SITTINGS = 3
ROUNDS = 9
LIMIT = 1.5
FLOOR_TIMEOUT = 120.0


@dataclass(frozen=True)
class Sitting:
    engine_s: float  # median wall time of the engine's runs
    floor_s: float  # median wall time of bare Celery's
    load: float  # the machine's one-minute load average at the end

    @property
    def ratio(self) -> float:
        return self.engine_s / self.floor_s


def sitting(*, task: Task, log_dir: Path, rounds: int = ROUNDS) -> Sitting:
    """One sitting: fresh workers, a warm-up, then ``rounds`` turns of each side."""
    engine_broker = broker_create(prefix="workgraph-scale-chain")
    floor_broker = broker_create(prefix="workgraph-scale-floor")
    previous = executor_set(engine_broker.executor())
    floor.floor_use(redis_url=floor_broker.url, queue=floor_broker.queue)
    engine_worker = worker_start(
        name=f"chain-{uuid.uuid4().hex[:8]}", concurrency=CELERY_CONCURRENCY, log_dir=log_dir,
        env=worker_env(broker=engine_broker, settings_module="tests.bench.instant_settings"),
    )
    floor_worker = floor_worker_start(redis_url=floor_broker.url, queue=floor_broker.queue, log_dir=log_dir)
    engine: list[float] = []
    bare: list[float] = []
    try:
        engine_worker.wait_ready()
        wait_until(lambda: " ready." in floor_worker.log_text(), timeout=60, alive=floor_worker.process,
                   message=lambda: floor_worker.log_text()[-4000:])
        for _ in range(2):
            graph_run(task=task, graph=GRAPH)
            floor_run()
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        for _ in range(rounds):
            engine.append(graph_run(task=task, graph=GRAPH).wall_s)
            os.sync()
            bare.append(floor_run())
            os.sync()
    finally:
        engine_worker.stop()
        floor_worker.stop()
        executor_set(previous)
        broker_delete(engine_broker)
        broker_delete(floor_broker)
    return Sitting(engine_s=statistics.median(engine), floor_s=statistics.median(bare), load=os.getloadavg()[0])


def measure(*, task: Task | None = None, log_dir: Path | None = None, sittings: int = SITTINGS) -> list[Sitting]:
    task = task or factories.TaskFactory()
    with tempfile.TemporaryDirectory(prefix="scale-chain-") as scratch:
        return [sitting(task=task, log_dir=log_dir or Path(scratch)) for _ in range(sittings)]


def rows(*, task: Task | None = None, log_dir: Path | None = None) -> list[tuple[str, str, str, bool]]:
    """One row per sitting (wall ÷ the floor's) and one for all three together."""
    measured = measure(task=task, log_dir=log_dir)
    table = [
        (f"chain 40, Celery: wall ÷ bare Celery's, sitting {number} (load {one.load:.1f})",
         f"{one.ratio:.2f}x ({one.engine_s * 1000:.0f} / {one.floor_s * 1000:.0f} ms)", f"≤ {LIMIT}x",
         one.ratio <= LIMIT)
        for number, one in enumerate(measured, start=1)
    ]
    met = sum(one.ratio <= LIMIT for one in measured)
    table.append(("chain 40, Celery: sittings within the limit", f"{met} of {len(measured)}",
                  f"{len(measured)} of {len(measured)}", met == len(measured)))
    return table


def floor_worker_start(*, redis_url: str, queue: str, log_dir: Path) -> Worker:
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


def floor_run() -> float:
    """Bare Celery's chain once: seconds from handing it over to its result."""
    handed_over = time.time()
    floor.SIGNATURES[GRAPH]().apply_async().get(timeout=FLOOR_TIMEOUT)
    return time.time() - handed_over
