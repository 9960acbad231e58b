"""Live log latency and loss, the file store against the database store, over channels-redis and real daphnes.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_live_logs.py -s -p no:cacheprovider -o python_files='bench_*.py'

Two stores, each measured with the console's code of its time:

- ``file``: each log a JSONL file on the worker's disk, appended and flushed before the line is
  published, tailed by the consumers — the code as of commit ``FILE_STORE_COMMIT``, unpacked from git
  into a temporary directory; its daphnes and its producer run from there and share one log directory;
- ``database``: each log rows in the database, COPYed by the writer thread of the producing process
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

import io
import multiprocessing
import queue
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

import pytest
from django.conf import settings
from django.db import connection

from tests.bench.live_console import (
    PRODUCER,
    REDIS_URL,
    ListenerResult,
    clients_process,
    console_env,
    console_set_up,
    daphne,
    database_fresh,
    producer_close,
    redis_reachable,
)

# The last commit whose logs were files on the worker's disk; the next one moved them to the database.
FILE_STORE_COMMIT = "fe228b4841e1dc60e580bb4cee8490bc5c3f11dc"
STORES = ("file", "database")
DAPHNES = (1, 2)
RATES = (100, 1000)
LISTENERS = (1, 20, 100)
STREAM_SECONDS = 2.0
# A case that has not drained this long after its last line is reported with what arrived.
DRAIN_SECONDS = 30.0


@dataclass(frozen=True)
class Store:
    name: str
    tree: Path
    env: dict[str, str]


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
    if not redis_reachable(REDIS_URL):
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
    with database_fresh(f"bench_live_logs_{name}", scratch) as database_url:
        env = console_env(tree=tree, database_url=database_url, scratch=scratch, name=name)
        # Only the file store (the tree of its own commit) gets a log directory.
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


def _store_cases(store: Store, results: list[CaseResult]) -> None:
    """Run every case on the store, adding each one's result to ``results`` as it finishes."""
    cases = [(daphnes, rate, listeners) for daphnes in DAPHNES for rate in RATES for listeners in LISTENERS]
    setup = console_set_up(tree=store.tree, env=store.env, executions=len(cases))
    with ExitStack() as stack:
        ports = [stack.enter_context(daphne(tree=store.tree, env=store.env)) for _ in range(max(DAPHNES))]
        for (daphnes, rate, listeners), execution_id in zip(cases, setup.executions, strict=True):
            results.append(_case(store, execution_id=execution_id, ports=ports[:daphnes], cookie=setup.cookie,
                                 rate=rate, listeners=listeners))


def database_case_run(scratch: Path, *, rate: int, listeners: int) -> CaseResult:
    """One case of the database store on one daphne, set up afresh in ``scratch``: the case another
    benchmark measures again in its own sitting."""
    with _store("database", scratch) as store:
        setup = console_set_up(tree=store.tree, env=store.env, executions=1)
        with daphne(tree=store.tree, env=store.env) as port:
            return _case(store, execution_id=setup.executions[0], ports=[port], cookie=setup.cookie, rate=rate,
                         listeners=listeners)


def _case(store: Store, *, execution_id: str, ports: list[int], cookie: str, rate: int, listeners: int) -> CaseResult:
    count = int(rate * STREAM_SECONDS)
    uris = [f"ws://127.0.0.1:{port}/ws/node-executions/{execution_id}/log/" for port in ports]
    context = multiprocessing.get_context("fork")  # the child needs no Django, only the arguments
    ready = context.Event()
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(
        target=clients_process, args=(uris, cookie), daemon=True,
        kwargs={"listeners": listeners, "resume_at_seq": (count + 1) // 3, "sent_at": _sent_at,
                "seconds": STREAM_SECONDS + DRAIN_SECONDS + 30, "ready": ready, "sending": sending},
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
        producer_close(self.process, self.errors)


def _sent_at(line: dict) -> float | None:
    # Line 1 was written before anyone connected: it measures nothing.
    return None if line["seq"] == 1 else line["t"]


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
