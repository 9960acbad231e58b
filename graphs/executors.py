"""Background jobs and where they run.

A job is a name and one id. The engine says which jobs there are and submits them through typed
functions (``graphs.engine.jobs``); its handlers are installed here once, at start-up
(``GraphsConfig.ready``). An executor decides where a submitted job runs: on Celery workers
(``REDIS_URL`` set), on a thread pool inside the serving process (embedded mode), or inline in the
caller's thread (management commands and tests drain it). Handlers must be idempotent: a job may be
delivered again after a worker dies. An executor also tells whether a job waits for a worker now
(``jobs_wait``): a worker that could go on with its own run's next node hands it out instead, so the
runs sharing the workers take turns.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Protocol

import redis
from celery import current_app
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction

logger = logging.getLogger(__name__)

# The Celery task every job travels in (graphs.jobs_celery), and the job the reaper's timer runs.
JOB_TASK_NAME = "graphs.job"
REAP_JOB = "reap"
# The job that reads open pull requests from their forges, every WORKGRAPH_FORGE_POLL_SECONDS.
FORGE_POLL_JOB = "forge_poll"
# How often, and how far apart at most (seconds), a job that lost its database is run again.
DATABASE_RETRIES = 5
DATABASE_BACKOFF_CAP = 30
# How long asking the broker whether a job waits may take: the answer only decides who runs a node, and
# a broker slow to give it must not hold up the worker asking.
BROKER_PROBE_TIMEOUT = 0.5

_handlers: dict[str, Callable[[str], None]] = {}


def job_handlers_install(handlers: Mapping[str, Callable[[str], None]]) -> None:
    """Add ``handlers`` (job name → function of the job's argument) to the jobs this process can run; a
    name installed again takes its new handler."""
    _handlers.update(handlers)


def job_run(name: str, arg: str) -> None:
    """Run one job in this thread. An unknown name is a programming error and raises KeyError."""
    try:
        handler = _handlers[name]
    except KeyError:
        raise KeyError(f"no handler for job {name!r}; installed: {', '.join(sorted(_handlers)) or 'none'}") from None
    handler(arg)


class Executor(Protocol):
    def submit(self, name: str, arg: str, *, delay: float = 0.0) -> None: ...

    def waiting(self) -> bool: ...


class CeleryExecutor:
    """Queues jobs on the broker once the surrounding transaction commits.

    ``broker_url`` and ``queue`` send them elsewhere than the Celery app's broker and default queue:
    a process feeding workers started with their own (the tests and benchmarks do this).
    """

    def __init__(self, *, broker_url: str | None = None, queue: str | None = None) -> None:
        self._broker_url = broker_url
        self._queue = queue

    def submit(self, name: str, arg: str, *, delay: float = 0.0) -> None:
        transaction.on_commit(lambda: self._publish(name, arg, delay))

    def _publish(self, name: str, arg: str, delay: float) -> None:
        options: dict = {"countdown": max(delay, 0.0) or None}
        if self._queue is not None:
            options["queue"] = self._queue
        try:
            if self._broker_url is None:
                current_app.send_task(JOB_TASK_NAME, (str(name), arg), **options)
                return
            with current_app.connection_for_write(self._broker_url) as connection:
                current_app.send_task(JOB_TASK_NAME, (str(name), arg), connection=connection, **options)
        except Exception:
            # The state that called for the job is committed (a queued row, a planning run): the reaper
            # hands it to the broker again once the broker is back. Raising here would only fail the
            # caller's request or job after the fact, and skip the other jobs committed with this one.
            logger.warning("could not publish job %s(%s); the reaper will resubmit it", name, arg, exc_info=True)

    def waiting(self) -> bool:
        """Whether a message lies in the queue, no worker having taken it: one LLEN on a Redis broker.

        Workers prefetch nothing beyond the job each runs (acknowledged late, a multiplier of one), so
        the list holds every job that waits. A broker that cannot be asked (not Redis, or unreachable)
        says no: the worker goes on as if its run were alone, as it did before it could ask.
        """
        return self.waiting_ask()()

    def waiting_ask(self) -> Callable[[], bool]:
        """``waiting``, asked now and answered by the function returned, which must be called once: the
        LLEN goes out at once and its reply is read by that call, so the worker sends its node's
        statements meanwhile instead of waiting for the broker first."""
        try:
            broker = self._broker
            if broker is None:
                return _none_waits
            pool = broker.connection_pool
            asking = pool.get_connection()
        except Exception:
            _ask_failed()
            return _none_waits
        try:
            asking.send_command("LLEN", self._queue or current_app.conf.task_default_queue)
        except Exception:
            pool.release(asking)
            _ask_failed()
            return _none_waits

        def answer() -> bool:
            try:
                return bool(asking.read_response())
            except Exception:
                # A reply half read must not be the next command's: the connection starts afresh.
                asking.disconnect()
                _ask_failed()
                return False
            finally:
                pool.release(asking)

        return answer

    @cached_property
    def _broker(self) -> redis.Redis | None:
        url = self._broker_url or current_app.conf.broker_url
        if not str(url).startswith(("redis://", "rediss://", "unix://")):
            return None
        return redis.Redis.from_url(url, socket_timeout=BROKER_PROBE_TIMEOUT,
                                    socket_connect_timeout=BROKER_PROBE_TIMEOUT)


def _none_waits() -> bool:
    return False


def _ask_failed() -> None:
    # The worker asks once an attempt has run and before recording it: raising would leave the attempt
    # running, its result unrecorded, until the reaper took it for lost.
    logger.warning("could not ask the broker whether a job waits; going on as if none did", exc_info=True)


class ThreadExecutor:
    """Runs jobs on a pool of threads in this process (the embedded mode), reaping lost work on a timer.

    A job that loses its database (SQLite busy past its timeout, a broken connection) is run again
    after a backoff, ``DATABASE_RETRIES`` times at most, as the Celery task retries it; every job is
    idempotent, and the retry starts on a fresh connection. Past that, the reaper recovers the work.
    """

    def __init__(self, workers: int, *, reap_interval: float | None = None,
                 periodic: Mapping[str, float] | None = None) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="workgraph")
        # Jobs handed to the pool that no thread has started yet: the pool's own queue is not public.
        self._waiting = 0
        self._waiting_lock = threading.Lock()
        # What Celery beat runs in the distributed mode: the reaper, and the jobs ``periodic`` names (each
        # every so many seconds; the forges' polling, say).
        timers = {REAP_JOB: reap_interval or 0.0, **(periodic or {})}
        for name, interval in timers.items():
            if interval:
                threading.Thread(target=self._run_forever, args=(name, interval), name=f"workgraph-{name}",
                                 daemon=True).start()

    def _run_forever(self, name: str, interval: float) -> None:
        while True:
            time.sleep(interval)
            self._enqueue(name, "", 0)

    def submit(self, name: str, arg: str, *, delay: float = 0.0) -> None:
        transaction.on_commit(lambda: self._submit_now(name, arg, delay))

    def _submit_now(self, name: str, arg: str, delay: float, retries: int = 0) -> None:
        if delay > 0:
            timer = threading.Timer(delay, self._enqueue, args=(name, arg, retries))
            timer.daemon = True
            timer.start()
        else:
            self._enqueue(name, arg, retries)

    def _enqueue(self, name: str, arg: str, retries: int) -> None:
        with self._waiting_lock:
            self._waiting += 1
        self._pool.submit(self._run, name, arg, retries)

    def waiting(self) -> bool:
        """Whether a job handed to the pool waits for a free thread (one due later, in a timer, does not)."""
        return self._waiting > 0

    def _run(self, name: str, arg: str, retries: int) -> None:
        with self._waiting_lock:
            self._waiting -= 1
        try:
            job_run(name, arg)
        except (OperationalError, InterfaceError):
            connection.close()
            if retries < DATABASE_RETRIES:
                delay = min(DATABASE_BACKOFF_CAP, 2**retries)
                logger.warning("job %s(%s) lost the database; retrying in %s s", name, arg, delay, exc_info=True)
                self._submit_now(name, arg, delay, retries + 1)
            else:
                logger.exception("job %s(%s) lost the database %s times; the reaper recovers it", name, arg, retries)
        except Exception:
            logger.exception("job %s(%s) failed", name, arg)
        finally:
            _connection_release()


class InlineExecutor:
    """Collects jobs and runs them in the caller's thread when ``drain()`` is called, earliest first."""

    def __init__(self) -> None:
        self._queue: list[tuple[float, int, str, str]] = []
        self._order = itertools.count()

    def submit(self, name: str, arg: str, *, delay: float = 0.0) -> None:
        heapq.heappush(self._queue, (time.monotonic() + max(delay, 0.0), next(self._order), name, arg))

    def drain(self, *, max_jobs: int = 100_000) -> int:
        """Run queued jobs (and the jobs they queue) until none is left; return how many ran."""
        ran = 0
        while self._queue and ran < max_jobs:
            due, _, name, arg = heapq.heappop(self._queue)
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            job_run(name, arg)
            ran += 1
        return ran

    def drain_due(self) -> int:
        """Run the jobs due now (and those they queue that are due at once), leaving later ones queued —
        a deadline's check, a backoff — for the caller to drain or discard; return how many ran."""
        ran = 0
        while self._queue and self._queue[0][0] <= time.monotonic():
            _, _, name, arg = heapq.heappop(self._queue)
            job_run(name, arg)
            ran += 1
        return ran

    def pending(self) -> int:
        return len(self._queue)

    def waiting(self) -> bool:
        """Never: the caller's thread is the only worker and drains every job in one go, so no worker is
        free while another's job waits, and handing a dependant out would only cost it a turn."""
        return False

    def discard(self) -> int:
        """Drop every queued job without running it (as a lost broker would); return how many."""
        dropped = len(self._queue)
        self._queue.clear()
        return dropped


def _connection_release() -> None:
    """Close the pool thread's database connection after a job, unless it is a healthy SQLite one.

    Opening a SQLite connection costs about a millisecond (Django registers its SQL functions and runs
    the PRAGMAs), a tenth of a node's whole cost in the embedded mode, and it holds nothing on a server:
    the thread keeps it for its next job. A server connection is closed, so an idle pool pins no backend.
    Either way the next job starts on a connection that is fresh or known to be sound.
    """
    healthy_sqlite = (
        connection.vendor == "sqlite"
        and connection.connection is not None
        and not connection.errors_occurred
        and not connection.in_atomic_block
        and connection.autocommit  # off when a transaction's end failed part way: its next commit would not run
    )
    if not healthy_sqlite:
        connection.close()


_executor: Executor | None = None
_executor_lock = threading.Lock()


def executor_get() -> Executor:
    """Return the executor for this process, creating the one the settings call for on first use."""
    global _executor
    with _executor_lock:
        if _executor is None:
            if settings.WORKGRAPH_EXECUTION == "celery":
                _executor = CeleryExecutor()
            else:
                _executor = ThreadExecutor(
                    workers=settings.WORKGRAPH_EMBEDDED_WORKERS, reap_interval=settings.WORKGRAPH_REAP_INTERVAL_SECONDS,
                    periodic={FORGE_POLL_JOB: settings.WORKGRAPH_FORGE_POLL_SECONDS},
                )
        return _executor


def executor_set(executor: Executor | None) -> Executor | None:
    """Replace this process's executor (management commands and tests); return the previous one."""
    global _executor
    with _executor_lock:
        previous, _executor = _executor, executor
    return previous


def jobs_wait() -> bool:
    """Whether a job submitted to this process's executor waits for a worker now."""
    return executor_get().waiting()


def jobs_wait_ask() -> Callable[[], bool]:
    """``jobs_wait``, asked now and answered by the function returned, which must be called once: on a
    Redis broker the question goes out at once and the call reads the reply (``CeleryExecutor.waiting_ask``);
    elsewhere the answer is in hand at once."""
    executor = executor_get()
    if isinstance(executor, CeleryExecutor):
        return executor.waiting_ask()
    waits = executor.waiting()
    return lambda: waits


def job_submit(name: str, arg: str, *, delay: float = 0.0) -> None:
    """Hand a job to this process's executor (once the surrounding transaction commits, where it queues).

    Callers outside this module use the engine's typed submitters, which know the job names."""
    executor_get().submit(str(name), str(arg), delay=delay)
