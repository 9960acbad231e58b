"""The floor: a bare Celery app whose no-op tasks form the benchmark's graphs as a chain and a chord.

Workers start with ``celery -A tests.bench.floor worker``; the broker and result backend come from
``FLOOR_REDIS_URL`` and the queue from ``FLOOR_QUEUE`` (the client sets the same with ``floor_use``),
so they share the Redis server the engine's workers use and nothing else. The options are the
engine's own (late acknowledgement, a prefetch of one, prefork), so the ratio to this floor is what
the engine adds on top of Celery.

Each task returns its upstream's records plus its own ``[name, started, finished]`` (wall-clock
seconds inside the task body), which is how the client learns every task's timings.
"""

from __future__ import annotations

import os
import time

from celery import Celery, chain, chord

Record = list  # [name, started, finished]
LEAVES = 498

# Not the current app: in the benchmark's process the project's ``shared_task``s must stay on its own.
app = Celery("workgraph_floor", set_as_current=False)
app.conf.update(
    broker_url=os.environ.get("FLOOR_REDIS_URL", "memory://"),
    result_backend=os.environ.get("FLOOR_REDIS_URL", "cache+memory://"),
    task_default_queue=os.environ.get("FLOOR_QUEUE", "floor"),
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    result_expires=600,
)


def floor_use(*, redis_url: str, queue: str) -> None:
    """Point this process's client at the workers' broker, result backend and queue."""
    app.conf.update(broker_url=redis_url, result_backend=redis_url, task_default_queue=queue)


@app.task(name="floor.noop")
def noop(upstream: list[Record] | None, name: str) -> list[Record]:
    started = time.time()
    return [*(upstream or []), [name, started, time.time()]]


@app.task(name="floor.join")
def join(upstream: list[list[Record]], name: str) -> list[Record]:
    started = time.time()
    # Every leaf carries the root's record: keep one copy of each.
    records = {record[0]: record for records in upstream for record in records}
    return [*records.values(), [name, started, time.time()]]


def chain40():
    """n0 -> n1 -> ... -> n39: each task receives the records of everything before it."""
    return chain(noop.si(None, "n0"), *(noop.s(f"n{index}") for index in range(1, 40)))


def fanout500():
    """root -> 498 leaves in parallel -> join (a chord)."""
    leaves = [noop.s(f"leaf{index:03d}") for index in range(LEAVES)]
    return chain(noop.si(None, "root"), chord(leaves, join.s("join")))


SIGNATURES = {"chain40": chain40, "fanout500": fanout500}
