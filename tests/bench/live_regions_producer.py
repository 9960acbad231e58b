"""The engine's side of the live regions benchmark (``bench_live_regions.py``), as a program.

    python tests/bench/live_regions_producer.py setup BIG_NODES STORM_NODES STORMS
    python tests/bench/live_regions_producer.py produce

Run with the environment the benchmark's daphnes get (settings, ``DATABASE_URL``, ``REDIS_URL``), so
what it emits crosses Redis to them as a worker's events do.

- ``setup`` migrates the database and lays out runs led by one user: a running run of BIG_NODES nodes
  (a binary tree, one queued attempt each) and STORMS running runs of STORM_NODES nodes, each in a task
  of its own; each run's server layout is computed (Node.js), as the background job would have. It
  prints one JSON line: the user's session cookie, and each run's id, task and node ids.
- ``produce`` reads commands on stdin, one a line, and answers each with one line on stdout:

  - ``change RUN NODE`` moves the node's latest attempt to its next status (queued → running →
    succeeded → failed → queued…) as the engine does: the row updated and its ``nodes`` event emitted
    in one transaction, delivered on commit. Answers ``emitted <epoch seconds just before the commit>``.
  - ``storm RUN RATE COUNT`` makes COUNT changes at RATE a second, taking the run's nodes in turn, each
    one UPDATE (autocommitted) and its ``nodes`` event, as the engine's hot path makes them.
    Answers ``stormed <changes a second achieved> <first emit> <last emit>``.
  - ``finish RUN STATUS`` moves the run to STATUS through ``run_status_set`` (its ``run_status`` event).
    Answers ``finished <epoch seconds>``.

  It stays until stdin closes: the live publisher's thread sends what it still holds.
"""

from __future__ import annotations

import json
import os
import sys
import time
from itertools import cycle

import django

NEXT_STATUS = {"queued": "running", "running": "succeeded", "succeeded": "failed", "failed": "queued"}


def main(arguments: list[str]) -> None:
    command, *rest = arguments
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    if command == "setup":
        big, storm, storms = (int(value) for value in rest)
        setup(big_nodes=big, storm_nodes=storm, storms=storms)
    elif command == "produce":
        produce()
    else:
        raise SystemExit(f"unknown command {command!r}")


def setup(*, big_nodes: int, storm_nodes: int, storms: int) -> None:
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from graphs.layout.run_layouts import run_layout_refresh
    from tests import factories

    call_command("migrate", verbosity=0)
    project = factories.ProjectFactory()
    alice = factories.member(project, "alice", role="lead")
    runs = [_run_made(factories.TaskFactory(project=project, created_by=alice), size)
            for size in (big_nodes, *[storm_nodes] * storms)]
    for run in runs:
        run_layout_refresh(run_id=run["run"])
    client = Client()
    client.force_login(alice)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    print(json.dumps({"cookie_name": settings.SESSION_COOKIE_NAME, "cookie": cookie,
                      "big": runs[0], "storms": runs[1:]}), flush=True)


def _run_made(task, size: int) -> dict:
    """A running run of ``size`` nodes in a binary tree, each with one queued attempt."""
    from graphs.models import WorkNodeExecution
    from tests.run_builders import edges_for, node, planned_run

    nodes = [node("n0")] + [node(f"n{i}", f"n{(i - 1) // 2}") for i in range(1, size)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="running")
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status="queued") for n in nodes],
        batch_size=1000,
    )
    return {"run": str(run.pk), "task": str(task.pk), "nodes": [n["node_id"] for n in nodes]}


def produce() -> None:
    for line in sys.stdin:
        command, *rest = line.split()
        if command == "change":
            run_id, node_id = rest
            print(f"emitted {_change(run_id=run_id, node_id=node_id):.6f}", flush=True)
        elif command == "storm":
            run_id, rate, count = rest
            print("stormed " + " ".join(f"{value:.6f}" for value in _storm(run_id, int(rate), int(count))), flush=True)
        elif command == "finish":
            print(f"finished {_finish(*rest):.6f}", flush=True)
        else:
            raise SystemExit(f"unknown command {command!r}")


def _change(*, run_id: str, node_id: str) -> float:
    """The node's latest attempt moved to its next status and announced, as the engine does; when."""
    from django.db import transaction

    from graphs.logs.events import node_states_emit
    from graphs.models import WorkNodeExecution

    with transaction.atomic():
        row = (WorkNodeExecution.objects.select_for_update().filter(run_id=run_id, node_id=node_id)
               .order_by("-attempt").first())
        row.status = NEXT_STATUS[row.status]
        row.save(update_fields=["status"])
        node_states_emit(run_id=run_id, rows=[row])
        emitted = time.time()
    return emitted


def _storm(run_id: str, rate: int, count: int) -> tuple[float, float, float]:
    """COUNT changes at RATE a second, each its own statement and event: the rows are read once, and
    each change is one UPDATE, committed, and its ``nodes`` event, as the engine's hot path makes them."""
    from graphs.logs.events import node_states_emit
    from graphs.models import WorkGraphRun, WorkNodeExecution

    order = [spec["node_id"] for spec in WorkGraphRun.objects.get(pk=run_id).graph_manifest["nodes"]]
    rows = {row["node_id"]: row for row in WorkNodeExecution.objects.filter(run_id=run_id).order_by("attempt")
            .values("node_exec_id", "node_id", "attempt", "status", "cause")}
    nodes = cycle(order)
    start = time.monotonic()
    first = last = 0.0
    for index in range(count):
        delay = start + index / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        row = rows[next(nodes)]
        row["status"] = NEXT_STATUS[row["status"]]
        WorkNodeExecution.objects.filter(pk=row["node_exec_id"]).update(status=row["status"])
        last = time.time()
        node_states_emit(run_id=run_id, rows=[row])
        first = first or last
    return count / (time.monotonic() - start), first, last


def _finish(run_id: str, status: str) -> float:
    from graphs.models import WorkGraphRun
    from graphs.runs.status import run_status_set

    run_status_set(run=WorkGraphRun.objects.get(pk=run_id), status=status)
    return time.time()


if __name__ == "__main__":
    main(sys.argv[1:])
