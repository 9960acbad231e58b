"""Real ``celery -A console worker`` subprocesses on a queue of their own, for tests and benchmarks.

The worker shares the test process's database (pytest-django's test database) but consumes a queue
named for the one test, in a Redis database the suite keeps for these workers: messages left behind
by other runs — or by a concurrent session running the same tests — cannot reach it. The test
process publishes there through ``CeleryExecutor(broker_url=..., queue=...)``.

Each worker starts in its own session, so its whole process group (the main process and its prefork
children) can be killed at once, like a machine that loses power.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import redis
from django.conf import settings
from django.db import connection

from graphs.executors import CeleryExecutor

BASE_DIR = Path(settings.BASE_DIR)
# The Redis database of the suite's Redis server that real workers use; queues in it are per test.
BROKER_DB = 13
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0


@dataclass(frozen=True)
class Broker:
    url: str
    queue: str

    def executor(self) -> CeleryExecutor:
        """An executor that publishes this process's jobs where the workers of this broker listen."""
        return CeleryExecutor(broker_url=self.url, queue=self.queue)


def broker_create(prefix: str = "workgraph-test") -> Broker:
    """A fresh, empty queue in the workers' Redis database."""
    kwargs = redis.Redis.from_url(settings.REDIS_URL).connection_pool.connection_kwargs
    url = f"redis://{kwargs.get('host', '127.0.0.1')}:{kwargs.get('port', 6379)}/{BROKER_DB}"
    return Broker(url=url, queue=f"{prefix}-{uuid.uuid4().hex[:12]}")


def broker_delete(broker: Broker) -> None:
    """Remove the queue, its bindings and the deliveries killed workers left unacknowledged.

    Kombu keeps unacknowledged deliveries of every queue in one ``unacked`` hash (and restores them
    after the visibility timeout); only this queue's entries are removed, so a concurrent session's
    workers are left alone.
    """
    client = redis.Redis.from_url(broker.url, socket_connect_timeout=5)
    for key in client.scan_iter(match=f"*{broker.queue}*"):
        client.delete(key)
    for tag, raw in client.hscan_iter("unacked"):
        _, exchange, routing_key = json.loads(raw)
        if broker.queue in (exchange, routing_key):
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)


def current_database_url() -> str:
    """The URL of the database this process uses now (pytest-django's test database once it is set up)."""
    params = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{params['NAME']}"
    credentials = quote(params["USER"], safe="")
    if params.get("PASSWORD"):
        credentials += ":" + quote(params["PASSWORD"], safe="")
    return f"postgres://{credentials}@{params['HOST'] or '127.0.0.1'}:{params['PORT'] or 5432}/{params['NAME']}"


def worker_env(*, broker: Broker, settings_module: str = "tests.settings", **overrides: str) -> dict[str, str]:
    """The environment of a worker that shares this process's database and consumes ``broker``'s queue."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "DATABASE_URL": current_database_url(),
        "REDIS_URL": broker.url,
        "WORKGRAPH_CELERY_QUEUE": broker.queue,
        "WORKGRAPH_VAR_DIR": str(settings.VAR_DIR),
        "PYTHONUNBUFFERED": "1",
    }
    env.update(overrides)
    return env


@dataclass
class Worker:
    """One ``celery worker`` process group and the file its output goes to."""

    name: str
    process: subprocess.Popen
    log_path: Path

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Block until the worker logs that it is consuming, or fail with its output."""
        wait_until(lambda: f"{self.name}@" in self.log_text() and " ready." in self.log_text(), timeout=timeout,
                   message=lambda: f"worker {self.name} did not become ready:\n{self.log_text()[-4000:]}",
                   alive=self.process)

    def kill(self) -> None:
        """SIGKILL the whole group at once: no task finishes, no message is acknowledged or requeued."""
        _signal_group(self.process, signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT)

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL whatever is still there after a bound."""
        if self.process.poll() is None:
            _signal_group(self.process, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        # Prefork children may outlive a main process that was killed; the group goes in any case.
        _signal_group(self.process, signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT)


def worker_start(
    *,
    name: str,
    env: dict[str, str],
    log_dir: Path,
    concurrency: int = 2,
    pool: str = "prefork",
    beat: bool = False,
) -> Worker:
    """Start ``celery -A console worker`` (with embedded beat when ``beat``) in a new session."""
    log_path = log_dir / f"{name}.log"
    argv = [
        sys.executable, "-m", "celery", "-A", "console", "worker", "-n", f"{name}@%h", "-l", "INFO",
        f"--pool={pool}", f"--concurrency={concurrency}", "--without-gossip", "--without-mingle",
    ]
    if beat:
        argv += ["-B", "-s", str(log_dir / f"{name}-beat-schedule")]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    return Worker(name=name, process=process, log_path=log_path)


def wait_until(
    condition: Callable[[], bool],
    *,
    timeout: float,
    message: Callable[[], str],
    poll: float = 0.1,
    alive: subprocess.Popen | None = None,
) -> None:
    """Poll ``condition`` until it holds; fail with ``message()`` at the deadline or if ``alive`` exits."""
    deadline = time.monotonic() + timeout
    while not condition():
        if alive is not None and alive.poll() is not None:
            raise AssertionError(f"the worker exited with {alive.returncode}: {message()}")
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s: {message()}")
        time.sleep(poll)


def _signal_group(process: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass
