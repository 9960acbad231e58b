"""Server time and query counts of the task detail page and the graph endpoint at 10, 100 and 1,000 nodes.

Run on demand: ``make bench`` (or ``pytest tests/bench/bench_pages.py -o python_files='bench_*.py' -s``).
Each run holds every node once plus a retry for one node in five, with real-looking outputs.
"""

from __future__ import annotations

import statistics
import time

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from graphs.models import WorkNodeExecution
from tests import factories
from tests.graphs import edges_for, node, planned_run

SIZES = (10, 100, 1000)
REPEATS = 15


def _run_of(task, size: int):
    nodes = [node("n0")] + [node(f"n{i}", f"n{(i - 1) // 2}") for i in range(1, size)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="succeeded")
    output = {"text": "A realistic paragraph of agent output. " * 40}
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status="succeeded",
                           output_payload=output) for n in nodes]
        + [WorkNodeExecution(run=run, node_id=n["node_id"], attempt=2, cause="retry_self", subagent_type="planner",
                             status="succeeded", output_payload=output) for n in nodes[: size // 5]]
    )
    return run


def _time(client: Client, url: str) -> tuple[list[float], int]:
    client.get(url)  # warm caches (templates, the graph shape) as a live server would have them
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return timings, len(queries)


@pytest.mark.django_db
def test_page_server_time(project, alice):
    client = Client()
    client.force_login(alice)
    rows = []
    for size in SIZES:
        task = factories.TaskFactory(project=project)
        run = _run_of(task, size)
        for name, url in (("task detail", f"/tasks/{task.pk}/"), ("graph.json", f"/runs/{run.run_id}/graph.json")):
            timings, queries = _time(client, url)
            p95 = statistics.quantiles(timings, n=20)[-1]
            rows.append((name, size, statistics.median(timings), p95, queries))
    print(f"\n{'page':<12} {'nodes':>6} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}  ({connection.vendor})")
    for name, size, p50, p95, queries in rows:
        print(f"{name:<12} {size:>6} {p50:>8.1f} {p95:>8.1f} {queries:>8}")
