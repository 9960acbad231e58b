"""Real console processes for the live benchmarks: a fresh database, a signed-in user, daphnes, and
WebSocket listeners in a process of their own.

A benchmark builds a console tree's environment with ``console_env`` (on a database from
``database_fresh``), sets it up with ``console_set_up`` (``live_log_producer.py setup``: migrations, a
project led by one user, a task, running attempts, the user's session cookie), serves it with
``daphne`` and follows logs with ``clients_process``, run in a forked child so the listeners' parsing
does not steal the daphnes' time.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
import redis
from django.conf import settings
from django.db import connection
from psycopg import sql

REDIS_URL = settings.REDIS_URL or "redis://127.0.0.1:6379/0"
ORIGIN = "http://127.0.0.1"
PRODUCER = Path(__file__).with_name("live_log_producer.py")
# Migrating a fresh database takes most of a setup.
SETUP_SECONDS = 600
RESUME_PAUSE_SECONDS = 0.3

# When a listener sent a line it was given, from what the line carries (epoch seconds); None for a
# line that measures nothing.
SentAt = Callable[[dict], float | None]


@dataclass(frozen=True)
class ConsoleSetup:
    cookie: str
    task: str
    executions: list[str]


@dataclass(frozen=True)
class ListenerResult:
    resumer: bool
    seqs: list[int]
    # When each line that measures something was sent, and its latency, in the order received.
    sent: list[float]
    latencies: list[float]
    drops: int
    ended: bool
    # The log's last seq, as its ``end`` message said; None when it never came.
    last_seq: int | None


def redis_reachable(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


@contextmanager
def database_fresh(name: str, scratch: Path) -> Iterator[str]:
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


def console_env(*, tree: Path, database_url: str, scratch: Path, name: str) -> dict[str, str]:
    """The environment of a console process running ``tree`` on ``database_url`` and this run's Redis."""
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
    return env


def console_set_up(*, tree: Path, env: dict[str, str], executions: int) -> ConsoleSetup:
    """Migrate the tree's database and create the user, a task and ``executions`` running attempts."""
    done = subprocess.run(
        [sys.executable, str(PRODUCER), str(tree), "setup", str(executions)],
        cwd=tree, env=env, capture_output=True, text=True, timeout=SETUP_SECONDS,
    )
    if done.returncode != 0:
        raise RuntimeError(f"setting up the console of {tree} failed: {done.stderr[-3000:]}")
    answer = json.loads(done.stdout.splitlines()[-1])
    # The producer and the daphnes find the tree the same way: this says they run the code meant.
    assert Path(answer["logs_module"]).resolve().is_relative_to(tree.resolve()), answer["logs_module"]
    return ConsoleSetup(cookie=answer["cookie"], task=answer["task"], executions=answer["executions"])


@contextmanager
def daphne(*, tree: Path, env: dict[str, str], access_log: Path | None = None) -> Iterator[int]:
    """Run daphne on a free port, serving ``tree`` in ``env``; yield the port. With ``access_log``,
    daphne writes a line there for every request it answered."""
    port = _free_port()
    access = ["--access-log", str(access_log)] if access_log is not None else []
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [str(Path(sys.executable).with_name("daphne")), "-b", "127.0.0.1", "-p", str(port), *access,
             "console.asgi:application"],
            cwd=tree, env=env, stdout=output, stderr=subprocess.STDOUT,
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


def clients_process(uris: list[str], cookie: str, *, listeners: int, resume_at_seq: int | None, sent_at: SentAt,
                    seconds: float, ready, sending) -> None:
    """A forked child's body: follow the log with the listeners and send their results down ``sending``.

    ``ready`` is set once every listener has received its first line (it has joined the log's group).
    """
    sending.send(asyncio.run(_clients(uris, cookie, listeners=listeners, resume_at_seq=resume_at_seq,
                                      sent_at=sent_at, seconds=seconds, ready=ready)))


async def _clients(uris: list[str], cookie: str, *, listeners: int, resume_at_seq: int | None, sent_at: SentAt,
                   seconds: float, ready) -> list[ListenerResult]:
    """N steady listeners, taking the daphnes by turns, and with ``resume_at_seq`` one resumer more,
    which leaves once it has that seq and resumes on the next daphne."""
    waiting = [listeners + (resume_at_seq is not None)]

    def one_ready() -> None:
        waiting[0] -= 1
        if waiting[0] == 0:
            ready.set()

    tasks = [
        asyncio.create_task(_listen(uris[index % len(uris)], cookie, sent_at=sent_at, seconds=seconds,
                                    on_ready=one_ready))
        for index in range(listeners)
    ]
    if resume_at_seq is not None:
        tasks.append(asyncio.create_task(_listen(
            uris[listeners % len(uris)], cookie, sent_at=sent_at, seconds=seconds, on_ready=one_ready,
            resume_uri=uris[(listeners + 1) % len(uris)], resume_at_seq=resume_at_seq,
        )))
    return list(await asyncio.gather(*tasks))


async def _listen(uri: str, cookie: str, *, sent_at: SentAt, seconds: float, on_ready: Callable[[], None],
                  resume_uri: str | None = None, resume_at_seq: int | None = None) -> ListenerResult:
    """Follow the log to its end, for ``seconds`` at most; with ``resume_uri``, leave at
    ``resume_at_seq`` and resume there. A connection that drops is resumed on the same daphne, as the
    console's page does, and counted."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidHandshake

    seqs: list[int] = []
    sent_times: list[float] = []
    latencies: list[float] = []
    drops = 0
    headers = {"Cookie": cookie}
    pause_at = resume_at_seq if resume_uri is not None else None

    def result(*, last_seq: int | None) -> ListenerResult:
        return ListenerResult(resumer=resume_uri is not None, seqs=seqs, sent=sent_times, latencies=latencies,
                              drops=drops, ended=last_seq is not None, last_seq=last_seq)

    try:
        async with asyncio.timeout(seconds):
            while True:
                try:
                    async with connect(
                        f"{uri}?after={seqs[-1] if seqs else 0}", origin=ORIGIN, additional_headers=headers,
                        max_size=None,
                    ) as websocket:
                        async for raw in websocket:
                            message = json.loads(raw)
                            if message["type"] == "end":
                                return result(last_seq=message["last_seq"])
                            lines = [message["line"]] if message["type"] == "line" else message["lines"]
                            received = time.time()
                            if not seqs:
                                on_ready()
                            for line in lines:
                                seqs.append(line["seq"])
                                sent = sent_at(line)
                                if sent is not None:
                                    sent_times.append(sent)
                                    latencies.append(received - sent)
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
        return result(last_seq=None)


def producer_close(process: subprocess.Popen, errors) -> None:
    """Close a producer process's stdin, which lets it exit once its publisher has sent everything;
    killed if it has not within 10 s."""
    process.stdin.close()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    errors.close()
