"""Server time and query counts of the console's heaviest pages: the task detail page and the graph
endpoint at 10, 100, 1,000 and 3,000 nodes — graph.json also as a revisit answers it, 304 to the tag
the browser holds — and the runs list at 10,000 runs with each of its filters.

Run on demand: ``make bench`` (or ``pytest tests/bench/bench_pages.py -o python_files='bench_*.py' -s``).
A task's run holds every node once plus a retry for one node in five, with real-looking outputs. The
runs list's 10,000 runs belong to 1,000 tasks of the user's project (with 1,000 runs of another
project beside them), each with a planning call and five attempted nodes; the tables are vacuumed
and analysed once loaded, as autovacuum would.

Before timing, the objects made so far are frozen out of the garbage collector's reach, as the
console's server does once it has loaded (``console/asgi.py``): a full collection then walks only
what requests made, not every module and class loaded.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.run_builders import edges_for, node, planned_run

SIZES = (10, 100, 1000, 3000)
REPEATS = 30
RUNS = 10_000
RUNS_PER_TASK = 10
# A run's node ids: four every run has, and one shared by 20 runs of the 10,000 — what a search finds.
RUN_NODES = ("brd", "prd", "impl", "unit_test")
RUN_STATUSES = ("succeeded", "succeeded", "succeeded", "failed", "cancelled", "running", "awaiting_approval")


def _run_of(task, size: int):
    nodes = [node("n0")] + [node(f"n{i}", f"n{(i - 1) // 2}") for i in range(1, size)]
    manifest = {"nodes": nodes, "edges": edges_for(nodes)}
    run = planned_run(task, manifest, status="succeeded")
    # As a planning call records it: the agent's answer, the manifest found in it and the normalized one.
    run.executions.filter(node_id=PLANNING_NODE_ID).update(output_payload={
        "raw_response": f"Here is the plan.\n```json\n{json.dumps(manifest)}\n```", "extracted_manifest": manifest,
        "manifest": manifest, "normalization_notes": [], "validation_errors": [],
        "new_node_ids": [n["node_id"] for n in nodes],
    })
    output = {"text": "A realistic paragraph of agent output. " * 40}
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status="succeeded",
                           output_payload=output) for n in nodes]
        + [WorkNodeExecution(run=run, node_id=n["node_id"], attempt=2, cause="retry_self", subagent_type="planner",
                             status="succeeded", output_payload=output) for n in nodes[: size // 5]]
    )
    return run


def _time(client: Client, url: str, *, revisit: bool = False) -> tuple[list[float], int]:
    """``url``'s server time and queries; a ``revisit`` sends the tag the first answer carried."""
    first = client.get(url)  # warm caches (templates, the graph shape) as a live server would have them
    headers = {"HTTP_IF_NONE_MATCH": first["ETag"]} if revisit else {}
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        response = client.get(url, **headers)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == (304 if revisit else 200)
    with CaptureQueriesContext(connection) as queries:
        client.get(url, **headers)
    return timings, len(queries)


def _frozen_as_the_server_is() -> None:
    gc.collect()
    gc.freeze()


def _print(rows: list[tuple], first: str) -> None:
    print(f"\n{first:<34} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}  ({connection.vendor})")
    for name, timings, queries in rows:
        p95 = statistics.quantiles(timings, n=20)[-1]
        print(f"{name:<34} {statistics.median(timings):>8.1f} {p95:>8.1f} {queries:>8}")


@pytest.mark.django_db
def test_page_server_time(project, alice):
    client = Client()
    client.force_login(alice)
    urls = []
    for size in SIZES:
        task = factories.TaskFactory(project=project)
        run = _run_of(task, size)
        urls += [(f"task detail, {size:,} nodes", f"/tasks/{task.pk}/", False),
                 (f"graph.json, {size:,} nodes", f"/runs/{run.run_id}/graph.json", False),
                 (f"graph.json revisit (304), {size:,}", f"/runs/{run.run_id}/graph.json", True)]
    _frozen_as_the_server_is()
    try:
        _print([(name, *_time(client, url, revisit=revisit)) for name, url, revisit in urls], "page")
    finally:
        gc.unfreeze()


def _runs_made(project, *, runs: int) -> None:
    """``runs`` runs of the project, RUNS_PER_TASK a task, created an hour apart, newest last."""
    tasks = Task.objects.bulk_create(
        [Task(project=project, title=f"Task {index} of the runs list", goal_text="Benchmark the runs list.")
         for index in range(runs // RUNS_PER_TASK)]
    )
    manifest = {"nodes": [node(node_id) for node_id in (*RUN_NODES, "feature")], "edges": []}
    made = WorkGraphRun.objects.bulk_create(
        [WorkGraphRun(task=tasks[index // RUNS_PER_TASK], status=RUN_STATUSES[index % len(RUN_STATUSES)],
                      graph_manifest=manifest, stage="coder", manifest_version=2) for index in range(runs)],
        batch_size=1000,
    )
    now = timezone.now()
    for index, run in enumerate(made):
        run.created_at = now - timedelta(hours=runs - index)
        run.started_at = run.created_at + timedelta(seconds=5)
        finished = run.status in WorkGraphRun.FINISHED_STATUSES
        run.finished_at = run.started_at + timedelta(minutes=3) if finished else None
    WorkGraphRun.objects.bulk_update(made, ["created_at", "started_at", "finished_at"], batch_size=1000)
    attempts = []
    for index, run in enumerate(made):
        attempts.append(WorkNodeExecution(run=run, node_id=PLANNING_NODE_ID, subagent_type="planner",
                                          cause="planning", status="succeeded", agent_calls=1,
                                          cost_usd=Decimal("0.0100")))
        for position, node_id in enumerate((*RUN_NODES, f"feature_{index % (runs // 20)}")):
            attempts.append(WorkNodeExecution(
                run=run, node_id=node_id, subagent_type="planner" if position < 2 else "coder", status="succeeded",
                agent_calls=1, cost_usd=Decimal("0.0100") * (1 + index % 10), input_tokens=1200, output_tokens=300,
            ))
    WorkNodeExecution.objects.bulk_create(attempts, batch_size=2000)


# Committed, so that they can be vacuumed as a live database is; the tables are emptied afterwards.
@pytest.mark.django_db(transaction=True)
def test_runs_list_server_time(project, alice):
    _runs_made(project, runs=RUNS)
    _runs_made(factories.ProjectFactory(), runs=RUNS // 10)  # runs alice may not see
    with connection.cursor() as cursor:
        # What autovacuum does after a load: statistics for the planner, and the visibility map that
        # lets the attempts' indexes answer without reading the table.
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    client = Client()
    client.force_login(alice)
    week = timezone.now() - timedelta(days=7)
    urls = [
        ("runs list, page 1", "/runs/"),
        ("runs list, last page", f"/runs/?page={RUNS // 25}"),
        ("status = failed", "/runs/?status=failed"),
        ("org node = coder", "/runs/?org_node=coder"),
        ("created in the last week", f"/runs/?created_from={week.date().isoformat()}"),
        ("min cost $0.40", "/runs/?min_cost=0.40"),
        ("search a node id (20 runs)", "/runs/?q=feature_42"),
        ("search a title (10 runs)", "/runs/?q=Task+42+of"),
        ("all filters", f"/runs/?project={project.slug}&status=succeeded&org_node=coder"
                        f"&created_from=2000-01-01&min_cost=0.05&q=impl"),
        ("GET /api/runs, page 2", "/api/runs?page=2"),
    ]
    _frozen_as_the_server_is()
    try:
        _print([(name, *_time(client, url)) for name, url in urls], f"runs list ({RUNS:,} runs)")
    finally:
        gc.unfreeze()
