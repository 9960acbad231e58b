"""The peer: the benchmark's graphs as Prefect flows of no-op tasks, run by Prefect's own Python.

It needs Prefect 3, which the project does not depend on, so it runs in a virtualenv of its own
(``bench_engine_overhead`` creates it) against Prefect's local ephemeral server::

    var/bench-prefect-venv/bin/python tests/bench/prefect_peer.py 3 chain40 fanout500

It imports nothing from the project. The chain calls its tasks one after the other, as a Prefect
flow written for a chain would; the fan-out submits them, the join taking every leaf's future. Each
task receives its upstream results, as the engine's nodes receive their upstream outputs. After a
warm-up flow, every run prints one line ``BENCH {"graph", "wall_s", "spans"}``, where ``spans`` maps
each task to the wall-clock seconds its body started and finished.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from prefect import flow, task

Span = list[float]
LEAVES = 498


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


def main(repetitions: int, graphs: list[str]) -> None:
    warm_up()
    for _ in range(repetitions):
        for graph in graphs:
            started = time.time()
            results = FLOWS[graph]()
            wall = time.time() - started
            print("BENCH " + json.dumps({"graph": graph, "wall_s": wall, "spans": dict(results)}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
