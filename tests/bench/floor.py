"""The floor: a bare Celery app whose no-op tasks form the same graphs as a plain chain and chord.

Workers start with ``celery -A tests.bench.floor worker`` (see ``floor_worker_start``); the broker and
result backend come from ``FLOOR_REDIS_URL`` and the queue from ``FLOOR_QUEUE``, so they share the
Redis server the engine's workers use but nothing else. The options are the engine's own (late
acknowledgement, prefetch of one, prefork), so the ratio to this floor is what the engine adds.

Each task returns its upstream's records plus its own ``[name, started, finished]`` (wall-clock
seconds taken inside the task body), which is how the client learns every task's timings.
"""

from __future__ import annotations

import os
import time

from celery import Celery, chain, chord

Record = list  # [name, started, finished]

app = Celery("workgraph_floor")
app.conf.update(
    broker_url=os.environ.get("FLOOR_REDIS_URL", "memory://"),
    result_backend=os.environ.get("FLOOR_REDIS_URL", "cache+memory://"),
    task_default_queue=os.environ.get("FLOOR_QUEUE", "floor"),
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    result_expires=600,
)


@app.task(name="floor.noop")
def noop(upstream: list[Record] | None, name: str) -> list[Record]:
    started = time.time()
    return [*(upstream or []), [name, started, time.time()]]


@app.task(name="floor.join")
def join(upstream: list[list[Record]], name: str) -> list[Record]:
    started = time.time()
    # Every leaf carries the root's record; keep one copy of each.
    records = {record[0]: record for records in upstream for record in records}
    return [*records.values(), [name, started, time.time()]]


def chain_signature(length: int):
    """n0 -> n1 -> ... : each task receives the records of everything before it."""
    return chain(noop.si(None, "n0"), *(noop.s(f"n{i}") for i in range(1, length)))


def fanout_signature(leaves: int):
    """root -> ``leaves`` tasks in parallel -> join (a chord)."""
    return chain(noop.si(None, "root"), chord([noop.s(f"leaf{i:03d}") for i in range(leaves)], join.s("join")))
