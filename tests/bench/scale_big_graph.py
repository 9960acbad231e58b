"""A 10,000-node run: its import, its pages, and a run of its shape in the Celery mode against bare Celery.

The graph (``big_spec``) is a loop-agent DAG spec of ``LAYERS`` layers of ``WIDTH`` pi tasks: every task
past the first layer depends on two of the layer before it (the one in its column and the next), so
each node fans out to two and fans in from two — 10,000 nodes, 19,800 edges.

- import: ``dag_spec_import`` of the spec (checking, translating, storing), then ``run_start`` (every
  node's row), each timed once, as a user's import is;
- pages, server time as ``bench_pages.py`` takes it (the run's attempts all succeeded, planted as a
  finished run leaves them): the run graph's page and its graph.json (the page opens a run of more than
  ``graphs.layout.compute.MAX_WORK_NODES`` collapsed into stages, so its first paint is these two
  answers and one box per stage), the task page with its to-do tree folded by stage, and a node page;
- the run: the same shape (``RUN_LAYERS`` layers of ``WIDTH``) in the Celery mode, 4 worker processes,
  the instant agent (``tests.bench.instant``), against bare Celery running it layer by layer (a group of
  ``tests.bench.floor``'s no-op tasks a layer, the client waiting for each before sending the next: a
  canvas of the whole shape, each message carrying the rest of it, grows with the square of the layers),
  taking turns; each worker's largest resident set, read from /proc while the run goes, is the memory
  figure.

``rows()`` gives the table rows of ``tests/bench/bench_scale.py``; ``bench_big_graph.py`` runs it alone. It
must be called from a test that commits (``django_db(transaction=True)``): the workers share its database.
"""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from celery import group
from django.db import connection
from django.test import Client, override_settings
from django.utils import timezone

from graphs.engine import run_start, run_wait_finished
from graphs.executors import InlineExecutor, executor_set
from graphs.models import PLANNING_NODE_ID, Project, WorkGraphRun
from graphs.planning.dag_specs import dag_spec_import
from tests import factories
from tests.bench import floor
from tests.bench.report import p95
from tests.celery_worker import BASE_DIR, Worker, broker_create, broker_delete, wait_until, worker_env, worker_start

WIDTH = 100
LAYERS = 100
# The run's layers: the whole 10,000 when there is time for it (``SCALE_RUN_LAYERS=100``).
RUN_LAYERS = int(os.environ.get("SCALE_RUN_LAYERS", "10"))
WORKER_PROCESSES = 4
# A manifest's bounds (WORKGRAPH_MAX_NODES, WORKGRAPH_MAX_DEPTH) as an operator running such graphs sets them.
BOUNDS = {"WORKGRAPH_MAX_NODES": str(LAYERS * WIDTH), "WORKGRAPH_MAX_DEPTH": str(LAYERS)}
# Each side's runs of the shape after its warm-up, taking turns (``SCALE_RUN_ROUNDS``: one is what a sitting
# of the whole 10,000 nodes has time for).
ROUNDS = int(os.environ.get("SCALE_RUN_ROUNDS", "3"))
# The warm-up run's layers: enough to start every worker process, load the code and fill the caches.
WARM_UP_LAYERS = 3
PAGE_REPEATS = 10
RUN_TIMEOUT = 3600.0

TARGET_IMPORT_S = 10.0
TARGET_RATIO = 1.5
TARGET_GRAPH_S = 2.0
TARGET_TASK_PAGE_S = 0.5
TARGET_NODE_PAGE_S = 0.3
TARGET_RSS_MB = 500.0


def task_id(layer: int, column: int) -> str:
    return f"l{layer:03d}-c{column:03d}"


def big_spec(*, layers: int = LAYERS, width: int = WIDTH) -> dict:
    """The layered spec: ``layers`` of ``width`` pi tasks, each past the first fed by two of the layer before."""
    tasks = []
    for layer in range(layers):
        for column in range(width):
            depends = [] if layer == 0 else sorted({task_id(layer - 1, column),
                                                     task_id(layer - 1, (column + 1) % width)})
            tasks.append({"id": task_id(layer, column), "executor": "pi", "role": "implementer",
                          "depends_on": depends, "subtask_prompt": f"Do step {column} of layer {layer}."})
    return {"version": 3, "title": f"A {layers * width:,}-node layered graph",
            "objective": "Measure the console at scale.", "tasks": tasks}


@dataclass(frozen=True)
class Imported:
    run: WorkGraphRun
    import_s: float
    start_s: float


def imported(project: Project, *, layers: int = LAYERS) -> Imported:
    """Import the spec and start its run on an executor that keeps the jobs (none runs)."""
    spec = big_spec(layers=layers)
    previous = executor_set(InlineExecutor())
    try:
        started = time.perf_counter()
        run = dag_spec_import(project=project, spec=spec, source_name="scale.json")
        import_s = time.perf_counter() - started
        started = time.perf_counter()
        run_start(run=run)
        start_s = time.perf_counter() - started
    finally:
        executor_set(previous)
    return Imported(run=run, import_s=import_s, start_s=start_s)


def _finished(run: WorkGraphRun) -> None:
    """Mark every node's attempt succeeded with an output, as a finished run leaves them."""
    now = timezone.now()
    run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).update(
        status="succeeded", started_at=now, finished_at=now, output_payload={"text": "done: a paragraph. " * 20})
    WorkGraphRun.objects.filter(pk=run.pk).update(status="succeeded", finished_at=now)


def _timed(client: Client, url: str) -> list[float]:
    client.get(url)  # warm, as a live server is
    timings = []
    for _ in range(PAGE_REPEATS):
        started = time.perf_counter()
        response = client.get(url)
        timings.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
    return timings


@dataclass(frozen=True)
class Pages:
    graph_page: list[float]
    graph_json: list[float]
    task_page: list[float]
    node_page: list[float]

    @property
    def first_paint(self) -> list[float]:
        return [page + data for page, data in zip(self.graph_page, self.graph_json, strict=True)]


def pages(run: WorkGraphRun, *, user) -> Pages:
    _finished(run)
    with connection.cursor() as cursor:
        # What autovacuum does after a load this size: the planner's statistics (bench_pages.py does the same).
        cursor.execute("VACUUM ANALYZE")
    client = Client()
    client.force_login(user)
    node = run.executions.get(node_id=task_id(LAYERS // 2, WIDTH // 2))
    gc.collect()
    gc.freeze()  # as the console's server does once loaded (console/asgi.py)
    try:
        return Pages(graph_page=_timed(client, f"/runs/{run.run_id}/"),
                     graph_json=_timed(client, f"/runs/{run.run_id}/graph.json"),
                     task_page=_timed(client, f"/tasks/{run.task_id}/"),
                     node_page=_timed(client, f"/executions/{node.pk}/"))
    finally:
        gc.unfreeze()


class _PeakRss:
    """The largest resident set of any process of a group, sampled from /proc while it runs."""

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> _PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            for pid in _group_pids(self.root_pid):
                self.peak_kb = max(self.peak_kb, _rss_kb(pid))


def _group_pids(root_pid: int) -> list[int]:
    found = [root_pid]
    try:
        children = Path(f"/proc/{root_pid}/task/{root_pid}/children").read_text().split()
    except OSError:
        return found
    return found + [int(pid) for pid in children]


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass(frozen=True)
class Runs:
    nodes: int
    engine_s: list[float]
    floor_s: list[float]
    peak_rss_mb: float

    @property
    def ratio(self) -> float:
        return statistics.median(self.engine_s) / statistics.median(self.floor_s)


def _floor_worker_start(*, redis_url: str, queue: str, log_dir: Path) -> Worker:
    name = f"floor-{uuid.uuid4().hex[:8]}"
    log_path = log_dir / f"{name}.log"
    argv = [
        sys.executable, "-m", "celery", "-A", "tests.bench.floor", "worker", "-n", f"{name}@%h", "-l", "INFO",
        "--pool=prefork", f"--concurrency={WORKER_PROCESSES}", "--without-gossip", "--without-mingle",
    ]
    env = {**os.environ, "FLOOR_REDIS_URL": redis_url, "FLOOR_QUEUE": queue}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    return Worker(name=name, process=process, log_path=log_path)


def runs(project: Project, *, log_dir: Path, layers: int = RUN_LAYERS, rounds: int = ROUNDS) -> Runs:
    """The shape run ``rounds`` times by each side, taking turns, after one warm-up run each of
    ``WARM_UP_LAYERS`` layers."""
    engine_broker = broker_create(prefix="workgraph-scale-big")
    floor_broker = broker_create(prefix="workgraph-scale-big-floor")
    previous = executor_set(engine_broker.executor())
    floor.floor_use(redis_url=floor_broker.url, queue=floor_broker.queue)
    engine_worker = worker_start(
        name=f"big-{uuid.uuid4().hex[:8]}", concurrency=WORKER_PROCESSES, log_dir=log_dir,
        env=worker_env(broker=engine_broker, settings_module="tests.bench.instant_settings", **BOUNDS),
    )
    floor_worker = _floor_worker_start(redis_url=floor_broker.url, queue=floor_broker.queue, log_dir=log_dir)
    engine: list[float] = []
    bare: list[float] = []
    try:
        engine_worker.wait_ready()
        wait_until(lambda: " ready." in floor_worker.log_text(),
                   timeout=60, alive=floor_worker.process, message=lambda: floor_worker.log_text()[-4000:])
        with _PeakRss(engine_worker.process.pid) as peak:
            for turn in range(rounds + 1):
                size = layers if turn else min(layers, WARM_UP_LAYERS)  # the first turn warms both up
                engine_s = _engine_run(project, layers=size)
                floor_s = _floor_run(size)
                os.sync()
                if turn:
                    engine.append(engine_s)
                    bare.append(floor_s)
                    with connection.cursor() as cursor:
                        cursor.execute("ANALYZE")
    finally:
        engine_worker.stop()
        floor_worker.stop()
        executor_set(previous)
        broker_delete(engine_broker)
        broker_delete(floor_broker)
    return Runs(nodes=layers * WIDTH, engine_s=engine, floor_s=bare, peak_rss_mb=peak.peak_kb / 1024)


def _engine_run(project: Project, *, layers: int) -> float:
    run = dag_spec_import(project=project, spec=big_spec(layers=layers), source_name="scale.json")
    handed_over = timezone.now()
    run_start(run=run)
    run = run_wait_finished(run_id=run.run_id, timeout=RUN_TIMEOUT, poll=0.2)
    if run.status != "succeeded":
        raise RuntimeError(f"the {layers * WIDTH}-node run ended {run.status} ({run.error or 'no error'})")
    return (run.finished_at - handed_over).total_seconds()


def _floor_run(layers: int) -> float:
    started = time.time()
    for layer in range(layers):
        group(floor.noop.si(None, task_id(layer, column)) for column in range(WIDTH)).apply_async().get(
            timeout=RUN_TIMEOUT)
    return time.time() - started


def rows(*, project: Project | None = None, log_dir: Path | None = None) -> list[tuple[str, str, str, bool]]:
    """The 10,000-node run's rows: import, run ÷ bare Celery, pages' p50 (p95), worker memory."""
    with override_settings(**{name: int(value) for name, value in BOUNDS.items()}):
        return _rows(project=project, log_dir=log_dir)


def _rows(*, project: Project | None, log_dir: Path | None) -> list[tuple[str, str, str, bool]]:
    project = project or factories.ProjectFactory()
    user = factories.member(project, f"scale-{uuid.uuid4().hex[:6]}", role="lead")
    big = imported(project)
    seen = pages(big.run, user=user)
    with tempfile.TemporaryDirectory(prefix="scale-big-") as scratch:
        ran = runs(project, log_dir=log_dir or Path(scratch))

    def timing(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:,.0f} ms (p95 {p95(values) * 1000:,.0f})"

    nodes = LAYERS * WIDTH
    return [
        (f"{nodes:,}-node spec: import", f"{big.import_s:.2f} s (+ {big.start_s:.2f} s to start)",
         f"< {TARGET_IMPORT_S:g} s", big.import_s < TARGET_IMPORT_S),
        (f"{ran.nodes:,}-node run, Celery ({WORKER_PROCESSES} processes): wall ÷ bare Celery's",
         f"{ran.ratio:.2f}x ({statistics.median(ran.engine_s):.1f} / {statistics.median(ran.floor_s):.1f} s)",
         f"≤ {TARGET_RATIO}x", ran.ratio <= TARGET_RATIO),
        (f"{nodes:,} nodes: run graph first paint (page + graph.json, collapsed by stage)",
         timing(seen.first_paint), f"< {TARGET_GRAPH_S:g} s", statistics.median(seen.first_paint) < TARGET_GRAPH_S),
        (f"{nodes:,} nodes: task page (to-do tree folded by stage)", timing(seen.task_page),
         f"< {TARGET_TASK_PAGE_S:g} s", statistics.median(seen.task_page) < TARGET_TASK_PAGE_S),
        (f"{nodes:,} nodes: node page", timing(seen.node_page), f"< {TARGET_NODE_PAGE_S:g} s",
         statistics.median(seen.node_page) < TARGET_NODE_PAGE_S),
        (f"{ran.nodes:,}-node run: a worker's largest resident set", f"{ran.peak_rss_mb:,.0f} MB",
         f"< {TARGET_RSS_MB:g} MB", ran.peak_rss_mb < TARGET_RSS_MB),
    ]
