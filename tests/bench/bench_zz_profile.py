"""Live log latency and loss, the file store against the database store, over channels-redis and real daphnes.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_live_logs.py -s -p no:cacheprovider -o python_files='bench_*.py'

Two stores, each measured with the console's code of its time:

- ``file``: each log a JSONL file on the worker's disk, appended and flushed before the line is
  published, tailed by the consumers — the code as of commit ``FILE_STORE_COMMIT``, unpacked from git
  into a temporary directory; its daphnes and its producer run from there and share one log directory;
- ``database``: each log rows in the database, INSERTed by the writer thread of the producing process
  and published once stored, backlogs read from the database — this tree.

The two trees' migrations differ, so each store has a database of its own, ``bench_live_logs_<store>``:
on the PostgreSQL server of ``DATABASE_URL``, dropped and created anew (a SQLite file without
``DATABASE_URL``). ``tests/bench/live_log_producer.py``, run against the store's tree, migrates it,
creates the user, the attempts and the session cookie, and, one process per case, writes the lines
through that tree's ``log_append``. Both stores publish through channels-redis pub/sub; Redis comes
from ``REDIS_URL`` (else redis://127.0.0.1:6379/0) and the case is skipped without one.

Each store gets two daphnes; a case uses one or both. The producer streams lines at a fixed rate for
``STREAM_SECONDS`` to N listeners plus one more that disconnects a third of the way through and
resumes with ``?after=``. With two daphnes the listeners take them by turns, and the resuming one
comes back through the other daphne, as a page behind a load balancer may. A listener whose
connection drops (daphne, saturated, may miss a keepalive) resumes the same way on the same daphne,
as the console's page does, and the drops are counted. Clients run in a separate process (the
``websockets`` library), so their parsing does not steal the daphnes' time.

How to read the table: p50, p95 and max are the latency from ``log_append`` in the producer to
receipt, over the steady listeners (the resumer's backlog is late by design); lost and duplicated
count the producer's lines missing from or repeated in what each listener received, the resumer
included — they must be 0. The consumers of both stores also poll their store every half second, so
a p50 near 500 ms means the live path is broken and the lines came by the poll. Notes under the table
name a case whose producer fell short of its rate, or whose listeners had not all seen the log's end
``DRAIN_SECONDS`` after its last line (the case is reported with what arrived).
"""

from __future__ import annotations

import asyncio
import io
import json
import multiprocessing
import os
import queue
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
import redis
from django.conf import settings
from django.db import connection
from psycopg import sql

# The last commit whose logs were files on the worker's disk; the next one moved them to the database.
FILE_STORE_COMMIT = "fe228b4841e1dc60e580bb4cee8490bc5c3f11dc"
STORES = ("database",)
DAPHNES = (1,)
RATES = (1000,)
LISTENERS = (100,)
STREAM_SECONDS = 6.0
# A case that has not drained this long after its last line is reported with what arrived.
DRAIN_SECONDS = 30.0
RESUME_PAUSE_SECONDS = 0.3
# Migrating a fresh database takes most of a store's setup.
SETUP_SECONDS = 600
REDIS_URL = settings.REDIS_URL or "redis://127.0.0.1:6379/0"
ORIGIN = "http://127.0.0.1"
PRODUCER = Path(__file__).with_name("live_log_producer.py")


@dataclass(frozen=True)
class Store:
    name: str
    tree: Path
    env: dict[str, str]


@dataclass(frozen=True)
class StoreSetup:
    cookie: str
    executions: list[str]


@dataclass(frozen=True)
class ListenerResult:
    resumer: bool
    seqs: list[int]
    latencies: list[float]
    drops: int
    ended: bool


@dataclass(frozen=True)
class CaseResult:
    store: str
    daphnes: int
    rate: int
    listeners: int
    produced_per_second: float | None
    producer_error: str
    latencies_ms: list[float]
    lost: int
    duplicated: int
    drops: int
    unended: int


def test_live_log_latency_and_loss():
    if not _redis_reachable(REDIS_URL):
        pytest.skip(f"needs a reachable Redis at {REDIS_URL}")
    started = time.monotonic()
    results: list[CaseResult] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-live-logs-") as scratch:
            for name in STORES:
                with _store(name, Path(scratch)) as store:
                    _store_cases(store, results)
    finally:
        # A run that stopped on an error still shows the cases it finished.
        _print_table(results, seconds=time.monotonic() - started)
    assert all(r.lost == 0 and r.duplicated == 0 for r in results), "a listener lost or repeated lines"


@contextmanager
def _store(name: str, scratch: Path) -> Iterator[Store]:
    """The store's tree, database and environment, for its daphnes and its producer."""
    tree = settings.BASE_DIR if name == "database" else _tree_unpacked(FILE_STORE_COMMIT, scratch / "file-tree")
    with _database(f"bench_live_logs_{name}", scratch) as database_url:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "PYTHONPATH": str(tree),
            "DATABASE_URL": database_url,
            "REDIS_URL": REDIS_URL,
            "WORKGRAPH_VAR_DIR": str(scratch / f"{name}-var"),
            # The factories' project folders, and whatever else the processes make, go with the scratch.
            "TMPDIR": str(scratch),
        }
        # Only the file store gets a log directory: given one, the database store would also write a JSONL copy.
        env.pop("WORKGRAPH_LOG_DIR", None)
        if name == "file":
            env["WORKGRAPH_LOG_DIR"] = str(scratch / "file-logs")
        yield Store(name=name, tree=tree, env=env)


def _tree_unpacked(commit: str, destination: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(settings.BASE_DIR), "archive", "--format=tar", commit], capture_output=True
    )
    if archive.returncode != 0:
        pytest.skip(f"needs commit {commit} (the file store's code) in this clone: {archive.stderr.decode()}")
    destination.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(destination, filter="data")
    return destination


@contextmanager
def _database(name: str, scratch: Path) -> Iterator[str]:
    """A fresh database: on the PostgreSQL server this run was given, else a SQLite file in ``scratch``."""
    config = connection.settings_dict
    if connection.vendor != "postgresql":
        yield f"sqlite:///{scratch / name}.sqlite3"
        return
    _postgres_database_drop(config, name)
    _postgres_run(config, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    credentials = quote(config["USER"]) + (f":{quote(config['PASSWORD'])}" if config["PASSWORD"] else "")
    try:
        yield f"postgres://{credentials}@{config['HOST'] or 'localhost'}:{config['PORT'] or 5432}/{name}"
    finally:
        _postgres_database_drop(config, name)


def _postgres_database_drop(config: dict, name: str) -> None:
    # FORCE: a daphne killed mid-case may leave its connection behind for a moment.
    _postgres_run(config, sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _postgres_run(config: dict, statement: sql.Composed) -> None:
    with psycopg.connect(
        host=config["HOST"] or "localhost", port=config["PORT"] or 5432, user=config["USER"],
        password=config["PASSWORD"] or None, dbname="postgres", autocommit=True,
    ) as server:
        server.execute(statement)


def _store_cases(store: Store, results: list[CaseResult]) -> None:
    """Run every case on the store, adding each one's result to ``results`` as it finishes."""
    cases = [(daphnes, rate, listeners) for daphnes in DAPHNES for rate in RATES for listeners in LISTENERS]
    setup = _store_set_up(store, executions=len(cases))
    with ExitStack() as stack:
        ports = [stack.enter_context(_daphne(store)) for _ in range(max(DAPHNES))]
        for (daphnes, rate, listeners), execution_id in zip(cases, setup.executions, strict=True):
            results.append(_case(store, execution_id=execution_id, ports=ports[:daphnes], cookie=setup.cookie,
                                 rate=rate, listeners=listeners))


def _store_set_up(store: Store, *, executions: int) -> StoreSetup:
    done = subprocess.run(
        [sys.executable, str(PRODUCER), str(store.tree), "setup", str(executions)],
        cwd=store.tree, env=store.env, capture_output=True, text=True, timeout=SETUP_SECONDS,
    )
    if done.returncode != 0:
        raise RuntimeError(f"setting up the {store.name} store failed: {done.stderr[-3000:]}")
    answer = json.loads(done.stdout.splitlines()[-1])
    # The producer and the daphnes find the tree the same way: this says they run the code meant.
    assert Path(answer["logs_module"]).resolve().is_relative_to(store.tree.resolve()), answer["logs_module"]
    return StoreSetup(cookie=answer["cookie"], executions=answer["executions"])


def _case(store: Store, *, execution_id: str, ports: list[int], cookie: str, rate: int, listeners: int) -> CaseResult:
    count = int(rate * STREAM_SECONDS)
    uris = [f"ws://127.0.0.1:{port}/ws/node-executions/{execution_id}/log/" for port in ports]
    context = multiprocessing.get_context("fork")  # the child needs no Django, only the arguments
    ready = context.Event()
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(
        target=_clients_process, args=(uris, cookie, listeners, count + 1, ready, sending), daemon=True
    )
    with _Producer(store, execution_id=execution_id, rate=rate, count=count) as producer:
        child.start()
        try:
            assert ready.wait(60), "the listeners did not all connect"
            producer.go()
            produced = producer.produced(timeout=STREAM_SECONDS + 60)
            producer_error = "" if produced is not None else producer.error()
            assert receiving.poll(DRAIN_SECONDS + 60), "the listeners never reported"
            listener_results: list[ListenerResult] = receiving.recv()
        finally:
            child.join(5)
            if child.is_alive():
                child.kill()
    expected = set(range(1, count + 2))
    return CaseResult(
        store=store.name,
        daphnes=len(ports),
        rate=rate,
        listeners=listeners,
        produced_per_second=produced,
        producer_error=producer_error,
        latencies_ms=[1000 * latency for r in listener_results if not r.resumer for latency in r.latencies],
        lost=sum(len(expected - set(r.seqs)) for r in listener_results),
        duplicated=sum(len(r.seqs) - len(set(r.seqs)) for r in listener_results),
        drops=sum(r.drops for r in listener_results),
        unended=sum(not r.ended for r in listener_results),
    )


class _Producer:
    """``live_log_producer.py produce`` in the store's tree: ready once line 1 is written, then on ``go``."""

    def __init__(self, store: Store, *, execution_id: str, rate: int, count: int) -> None:
        self.command = [sys.executable, str(PRODUCER), str(store.tree), "produce", execution_id, str(rate), str(count)]
        self.store = store
        self.lines: queue.Queue[str] = queue.Queue()

    def __enter__(self) -> _Producer:
        self.errors = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            self.command, cwd=self.store.tree, env=self.store.env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
        )
        # A reader thread, so every wait on the producer has a deadline.
        threading.Thread(target=self._read, daemon=True).start()
        if self._line(timeout=60) != "ready":
            error = self.error()
            self.__exit__()
            raise RuntimeError(f"the producer did not start: {error}")
        return self

    def go(self) -> None:
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def produced(self, *, timeout: float) -> float | None:
        """The rate the producer achieved, once it closed the log; None when it did not say in time."""
        line = self._line(timeout=timeout)
        return float(line.split()[1]) if line.startswith("produced ") else None

    def error(self) -> str:
        self.errors.seek(0)
        lines = self.errors.read().strip().splitlines()
        return lines[-1] if lines else f"exit status {self.process.poll()}"

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put("")

    def _line(self, *, timeout: float) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return ""

    def __exit__(self, *exc) -> None:
        # Its stdin closing lets it exit, once its publisher has sent everything.
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.errors.close()


def _clients_process(uris: list[str], cookie: str, listeners: int, last_seq: int, ready, sending) -> None:
    sending.send(asyncio.run(_clients(uris, cookie, listeners, last_seq, ready)))


async def _clients(uris: list[str], cookie: str, listeners: int, last_seq: int, ready) -> list[ListenerResult]:
    """N steady listeners and one resumer, taking the daphnes by turns; the resumer resumes on the next one."""
    waiting = [listeners + 1]

    def one_ready() -> None:
        waiting[0] -= 1
        if waiting[0] == 0:
            ready.set()

    tasks = [
        asyncio.create_task(_listen(uris[index % len(uris)], cookie, last_seq, one_ready))
        for index in range(listeners)
    ]
    tasks.append(asyncio.create_task(_listen(
        uris[listeners % len(uris)], cookie, last_seq, one_ready, resume_uri=uris[(listeners + 1) % len(uris)]
    )))
    return list(await asyncio.gather(*tasks))


async def _listen(uri: str, cookie: str, last_seq: int, on_ready, *, resume_uri: str | None = None) -> ListenerResult:
    """Follow the log to its end; with ``resume_uri``, leave a third of the way through and resume there."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidHandshake

    seqs: list[int] = []
    latencies: list[float] = []
    drops = 0
    headers = {"Cookie": cookie}
    pause_at = last_seq // 3 if resume_uri is not None else None

    def result(*, ended: bool) -> ListenerResult:
        return ListenerResult(resumer=resume_uri is not None, seqs=seqs, latencies=latencies, drops=drops,
                              ended=ended)

    try:
        async with asyncio.timeout(STREAM_SECONDS + DRAIN_SECONDS + 30):
            while True:
                try:
                    async with connect(
                        f"{uri}?after={seqs[-1] if seqs else 0}", origin=ORIGIN, additional_headers=headers,
                        max_size=None,
                    ) as websocket:
                        async for raw in websocket:
                            message = json.loads(raw)
                            if message["type"] == "end":
                                return result(ended=True)
                            lines = [message["line"]] if message["type"] == "line" else message["lines"]
                            received = time.time()
                            for line in lines:
                                seqs.append(line["seq"])
                                if line["seq"] == 1:
                                    on_ready()  # line 1 was written before anyone connected: it measures nothing
                                else:
                                    latencies.append(received - line["t"])
                            if pause_at is not None and seqs[-1] >= pause_at:
                                break
                # A handshake that times out (a saturated daphne) is a drop too, not the end of the case.
                except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError):
                    drops += 1
                    continue
                pause_at = None
                uri = resume_uri or uri
                await asyncio.sleep(RESUME_PAUSE_SECONDS)
    except TimeoutError:
        return result(ended=False)


@contextmanager
def _daphne(store: Store) -> Iterator[int]:
    """Run daphne on a free port, serving the store's tree against its database, log directory and Redis."""
    port = _free_port()
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [str(Path(sys.executable).with_name("daphne")), "-b", "127.0.0.1", "-p", str(port),
             "console.asgi:application"],
            cwd=store.tree, env=store.env, stdout=output, stderr=subprocess.STDOUT,
        )
        try:
            _wait_until_listening(process, port, output)
            yield port
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_listening(process: subprocess.Popen, port: int, output) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output.seek(0)
            raise RuntimeError(f"daphne exited: {output.read()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("daphne did not start listening within 30 s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _redis_reachable(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def _print_table(results: list[CaseResult], *, seconds: float) -> None:
    print()
    print(
        f"live log latency: channels-redis ({REDIS_URL}), daphne, {connection.vendor} databases; "
        f"{STREAM_SECONDS:g} s per case, + 1 listener that disconnects and resumes (on the other daphne of two)"
    )
    header = (
        f"{'store':<9} {'daphnes':>7} {'lines/s':>8} {'listeners':>9} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'max ms':>8} {'lost':>6} {'duplicated':>10} {'drops':>5}"
    )
    print(header)
    print("-" * len(header))
    notes = []
    for r in results:
        quantiles = statistics.quantiles(r.latencies_ms, n=100) if len(r.latencies_ms) > 1 else [0.0] * 99
        print(
            f"{r.store:<9} {r.daphnes:>7} {r.rate:>8} {r.listeners:>9} {quantiles[49]:>8.1f} {quantiles[94]:>8.1f} "
            f"{max(r.latencies_ms, default=0):>8.1f} {r.lost:>6} {r.duplicated:>10} {r.drops:>5}"
        )
        case = f"{r.store}, {r.daphnes} daphne(s), {r.rate} lines/s, {r.listeners} listeners"
        if r.produced_per_second is None:
            notes.append(f"{case}: the producer did not finish ({r.producer_error})")
        elif r.produced_per_second < 0.95 * r.rate:
            notes.append(f"{case}: the producer reached {r.produced_per_second:.0f} lines/s")
        if r.unended:
            notes.append(f"{case}: {r.unended} of {r.listeners + 1} listeners never saw the end")
    for note in notes:
        print(f"note: {note}")
    print(f"{len(results)} cases in {seconds:.0f} s")
