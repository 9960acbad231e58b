"""Live log latency from ``log_append`` to WebSocket clients, over channels-redis and a real daphne, on demand.

    .venv/bin/python -m pytest tests/bench/bench_live_logs.py -o python_files='bench_*.py' -s

Needs Redis (``REDIS_URL``, else redis://127.0.0.1:6379/0). The database is the one this run's tests
use (SQLite by default, PostgreSQL with ``DATABASE_URL``); the daphne subprocess is pointed at the same
database and log directory, so it authorises the clients against the rows created here.

Each case streams lines at a fixed rate for a couple of seconds to N listeners plus one more that
disconnects a third of the way through and resumes with ``?after=``. A listener whose connection drops
(daphne, saturated, may miss a keepalive) resumes the same way, as the console's page does, and the
drops are counted. Clients run in a separate process
(the ``websockets`` library), so their parsing does not steal the producer's time. It prints the
latency from append to receipt (p50, p95, max; steady listeners only — the resumer's backlog is late by
design) and, for every listener, the lines lost and duplicated, which must be 0.

The producer (this process) and daphne use the console's layer, channels-redis pub/sub: with layers
that do not speak to each other the lines would still all arrive, from the consumers' poll of the log
file, half a second late — so a p50 near ``POLL_SECONDS`` means the live path is broken.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.test import Client

from graphs.logs import log_append, log_file_close, log_file_open
from tests import factories

RATES = (100, 1000)
LISTENERS = (1, 20, 100)
STREAM_SECONDS = 2.0
# A case that has not drained this long after its last line is reported with what arrived.
DRAIN_SECONDS = 30.0
RESUME_PAUSE_SECONDS = 0.3
REDIS_URL = settings.REDIS_URL or "redis://127.0.0.1:6379/0"
ORIGIN = "http://127.0.0.1"


@dataclass(frozen=True)
class ListenerResult:
    resumer: bool
    seqs: list[int]
    latencies: list[float]
    drops: int


@dataclass(frozen=True)
class CaseResult:
    rate: int
    listeners: int
    lines: int
    produced_per_second: float
    latencies_ms: list[float]
    lost: int
    duplicated: int
    resumer_lost: int
    resumer_duplicated: int
    drops: int
    seconds: float


@pytest.mark.django_db(transaction=True)
def test_live_log_latency_and_loss(alice, task, settings):
    if not _redis_reachable(REDIS_URL):
        pytest.skip(f"needs a reachable Redis at {REDIS_URL}")
    # The layer daphne builds from REDIS_URL (console/settings.py), whatever this process was given.
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}
    }
    client = Client()
    client.force_login(alice)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    results = []
    with _daphne() as port:
        for rate in RATES:
            for listeners in LISTENERS:
                results.append(_case(task, port=port, cookie=cookie, rate=rate, listeners=listeners))
    _print_table(results)
    assert all(
        r.lost == 0 and r.duplicated == 0 and r.resumer_lost == 0 and r.resumer_duplicated == 0 for r in results
    ), "a listener lost or repeated lines"


def _case(task, *, port: int, cookie: str, rate: int, listeners: int) -> CaseResult:
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running")
    log_file_open(execution=execution)
    # Line 1 is there before anyone connects: a client that received it has joined the group.
    log_append(execution=execution, event="bench_ready", t=time.time())
    count = int(rate * STREAM_SECONDS)
    uri = f"ws://127.0.0.1:{port}/ws/node-executions/{execution.pk}/log/"
    context = multiprocessing.get_context("fork")  # the child needs no Django, only the arguments
    ready = context.Event()
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(
        target=_clients_process, args=(uri, cookie, listeners, count + 1, ready, sending), daemon=True
    )
    started = time.monotonic()
    child.start()
    try:
        assert ready.wait(60), "the listeners did not all connect"
        produced = _produce(execution, count=count, rate=rate)
        log_file_close(execution=execution)
        assert receiving.poll(DRAIN_SECONDS + 60), "the listeners never reported"
        listener_results: list[ListenerResult] = receiving.recv()
    finally:
        child.join(5)
        if child.is_alive():
            child.kill()
    expected = list(range(1, count + 2))
    steady = [r for r in listener_results if not r.resumer]
    resumer = next(r for r in listener_results if r.resumer)
    return CaseResult(
        rate=rate,
        listeners=listeners,
        lines=count,
        produced_per_second=produced,
        latencies_ms=[1000 * latency for r in steady for latency in r.latencies],
        lost=sum(len(set(expected) - set(r.seqs)) for r in steady),
        duplicated=sum(len(r.seqs) - len(set(r.seqs)) for r in steady),
        resumer_lost=len(set(expected) - set(resumer.seqs)),
        resumer_duplicated=len(resumer.seqs) - len(set(resumer.seqs)),
        drops=sum(r.drops for r in listener_results),
        seconds=time.monotonic() - started,
    )


def _produce(execution, *, count: int, rate: int) -> float:
    """Append ``count`` lines at ``rate`` per second; return the rate achieved."""
    start = time.monotonic()
    for index in range(count):
        delay = start + index / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        log_append(execution=execution, event="agent_output", text=f"bench line {index}", t=time.time())
    return count / (time.monotonic() - start)


def _clients_process(uri: str, cookie: str, listeners: int, last_seq: int, ready, sending) -> None:
    sending.send(asyncio.run(_clients(uri, cookie, listeners, last_seq, ready)))


async def _clients(uri: str, cookie: str, listeners: int, last_seq: int, ready) -> list[ListenerResult]:
    waiting = [listeners + 1]

    def one_ready() -> None:
        waiting[0] -= 1
        if waiting[0] == 0:
            ready.set()

    tasks = [asyncio.create_task(_listen(uri, cookie, last_seq, one_ready, resume=False)) for _ in range(listeners)]
    tasks.append(asyncio.create_task(_listen(uri, cookie, last_seq, one_ready, resume=True)))
    return list(await asyncio.gather(*tasks))


async def _listen(uri: str, cookie: str, last_seq: int, on_ready, *, resume: bool) -> ListenerResult:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    seqs: list[int] = []
    latencies: list[float] = []
    drops = 0
    headers = {"Cookie": cookie}
    pause_at = last_seq // 3 if resume else None

    def result() -> ListenerResult:
        return ListenerResult(resumer=resume, seqs=seqs, latencies=latencies, drops=drops)

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
                                return result()
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
                except ConnectionClosed:
                    drops += 1
                    continue
                pause_at = None
                await asyncio.sleep(RESUME_PAUSE_SECONDS)
    except TimeoutError:
        return result()


class _daphne:
    """Run daphne on a free port against this run's database, log directory and Redis."""

    def __enter__(self) -> int:
        self.port = _free_port()
        self.output = tempfile.NamedTemporaryFile(prefix="bench-daphne-", suffix=".log", delete=False)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": _database_url(),
            "REDIS_URL": REDIS_URL,
            "WORKGRAPH_LOG_DIR": str(settings.WORKGRAPH_LOG_DIR),
        }
        daphne = Path(sys.executable).with_name("daphne")
        self.process = subprocess.Popen(
            [str(daphne), "-b", "127.0.0.1", "-p", str(self.port), "console.asgi:application"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=self.output,
            stderr=subprocess.STDOUT,
        )
        try:
            self._wait_until_listening()
        except BaseException:
            self.__exit__()
            raise
        return self.port

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited: {Path(self.output.name).read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("daphne did not start listening within 30 s")

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.output.close()
        Path(self.output.name).unlink(missing_ok=True)


def _database_url() -> str:
    config = connection.settings_dict
    if config["ENGINE"] in ("console.sqlite", "django.db.backends.sqlite3"):
        return f"sqlite:///{Path(config['NAME']).resolve()}"
    credentials = config["USER"] + (f":{config['PASSWORD']}" if config["PASSWORD"] else "")
    return f"postgres://{credentials}@{config['HOST'] or 'localhost'}:{config['PORT'] or 5432}/{config['NAME']}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _redis_reachable(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def _print_table(results: list[CaseResult]) -> None:
    print()
    print(
        f"live log latency: channels-redis ({REDIS_URL}), daphne, {connection.vendor} database; "
        f"{STREAM_SECONDS:.0f} s per case, + 1 listener that disconnects and resumes"
    )
    header = (
        f"{'lines/s':>8} {'listeners':>9} {'lines':>6} {'produced/s':>10} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'max ms':>8} {'lost':>5} {'dup':>4} {'resumer lost/dup':>16} {'drops':>5} {'case s':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        quantiles = statistics.quantiles(r.latencies_ms, n=100) if len(r.latencies_ms) > 1 else [0.0] * 99
        print(
            f"{r.rate:>8} {r.listeners:>9} {r.lines:>6} {r.produced_per_second:>10.0f} {quantiles[49]:>8.1f} "
            f"{quantiles[94]:>8.1f} {max(r.latencies_ms, default=0):>8.1f} {r.lost:>5} "
            f"{r.duplicated:>4} "
            f"{f'{r.resumer_lost}/{r.resumer_duplicated}':>16} {r.drops:>5} {r.seconds:>7.1f}"
        )
