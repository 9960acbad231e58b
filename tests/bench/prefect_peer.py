"""The peer: the benchmark's graphs as Prefect flows of no-op tasks, run by Prefect's own Python.

It needs Prefect 3, which the project does not depend on, so it runs in a virtualenv of its own
(``bench_engine_overhead`` creates it) against Prefect's local ephemeral server::

    var/bench-prefect-venv/bin/python tests/bench/prefect_peer.py

reads graph names on stdin, one a line, and runs each as it comes, so the benchmark can run the peer by
turns with the other systems (see ``tests.bench.by_turns``).

It imports nothing from the project. The chain calls its tasks one after the other, as a Prefect
flow written for a chain would; the fan-out submits them, the join taking every leaf's future. Each
task receives its upstream results, as the engine's nodes receive their upstream outputs. After a
warm-up flow it prints ``READY``; then every run prints one line ``BENCH {"graph", "wall_s", "spans"}``,
where ``spans`` maps each task to the wall-clock seconds its body started and finished.

The server records a flow's task runs from events, after the flow has returned; a 500-task fan-out
leaves it busy for seconds, which would slow whatever runs next. So before the next run starts, the
peer waits (unmeasured) until the server has recorded every task run of the last one as completed.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from prefect import flow, get_client, task
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterId,
    TaskRunFilter,
    TaskRunFilterState,
    TaskRunFilterStateType,
)
from prefect.client.schemas.objects import StateType

Span = list[float]
LEAVES = 498
SETTLE_TIMEOUT = 120.0


@task
def noop(name: str, upstream: Any = None) -> tuple[str, Span]:
    started = time.time()
    return name, [started, time.time()]


@flow
def chain40() -> list[tuple[str, Span]]:
    results, previous = [], None
    for index in range(40):
        previous = noop(f"n{index}", previous)
        results.append(previous)
    return results


@flow
def fanout500() -> list[tuple[str, Span]]:
    root = noop.submit("root")
    leaves = [noop.submit(f"leaf{index:03d}", root) for index in range(LEAVES)]
    join = noop.submit("join", leaves)
    return [root.result(), *(leaf.result() for leaf in leaves), join.result()]


@flow
def warm_up() -> tuple[str, Span]:
    return noop("warm-up")


FLOWS = {"chain40": chain40, "fanout500": fanout500}


def settle(state: Any, tasks: int) -> None:
    """Wait until the server has recorded all ``tasks`` task runs of the flow run as completed."""
    flow_runs = FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
    completed = TaskRunFilter(state=TaskRunFilterState(type=TaskRunFilterStateType(any_=[StateType.COMPLETED])))
    deadline = time.monotonic() + SETTLE_TIMEOUT
    with get_client(sync_client=True) as client:
        # A task run at offset tasks - 1 exists once all of them are there.
        while not client.read_task_runs(flow_run_filter=flow_runs, task_run_filter=completed, limit=1,
                                        offset=tasks - 1):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server recorded fewer than {tasks} task runs in {SETTLE_TIMEOUT:g} s")
            time.sleep(0.2)


def main() -> None:
    state, tasks = warm_up(return_state=True), 1
    print("READY", flush=True)
    for line in sys.stdin:
        graph = line.strip()
        settle(state, tasks)
        started = time.time()
        state = FLOWS[graph](return_state=True)
        wall = time.time() - started
        results = state.result()
        tasks = len(results)
        print("BENCH " + json.dumps({"graph": graph, "wall_s": wall, "spans": dict(results)}), flush=True)


if __name__ == "__main__":
    main()
