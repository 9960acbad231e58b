"""Many finished-looking runs at once, for measuring the runs list at scale (``manage.py seed_runs N``).

Each run belongs to a task of the seeded project (ten runs a task), was created at a moment of the past
year, and holds a planning call and four to six attempted nodes of the planner, coder, validator and
reviewer, each with tokens and a cost (one attempt in twenty reported none), its ``cost_usd`` their
sum as the engine keeps it. Statuses are as a console in use has them: mostly succeeded, some
failed, cancelled or rejected, and a few of the last day's runs under way. The rows go in as they are,
by COPY on PostgreSQL.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import JSONField, Model
from django.utils import timezone

from graphs.models import PLANNING_NODE_ID, Project, Task, WorkGraphRun, WorkNodeExecution

RUNS_PER_TASK = 10
BATCH = 5000
ORG_NODES = ("planner", "coder", "validator", "reviewer")
NODE_IDS = ("brd", "prd", "impl", "unit_test", "docs", "review")
# Weights of the statuses a run ends in, or is in. Only a run of the last day may still be under way:
# the reaper ends a run whose worker died, so a console's history is runs that ended.
STATUSES = (("succeeded", 70), ("failed", 12), ("cancelled", 6), ("rejected", 3), ("running", 5),
            ("awaiting_approval", 2), ("planning_failed", 2))
ENDED_STATUSES = tuple((status, weight) for status, weight in STATUSES if status in WorkGraphRun.FINISHED_STATUSES)
UNDER_WAY_FOR = timedelta(days=1)
FEATURES = 5000


@dataclass(frozen=True)
class Seeded:
    project: Project
    tasks: int
    runs: int
    attempts: int


def runs_seed(count: int, *, project_slug: str = "seed-runs", seed: int = 1, now: datetime | None = None) -> Seeded:
    """Add ``count`` runs (and their tasks and attempts) to the project ``project_slug``, made if missing."""
    rng = random.Random(seed)  # noqa: S311 — made-up rows, repeatable by their seed, not a secret
    now = now or timezone.now()
    project, _ = Project.objects.get_or_create(
        slug=project_slug, defaults={"name": f"Seeded runs ({project_slug})", "target_folder": ""})
    choices = {True: tuple(zip(*STATUSES, strict=True)), False: tuple(zip(*ENDED_STATUSES, strict=True))}
    attempts = 0
    with transaction.atomic():
        tasks = [{"task_id": uuid.UUID(int=rng.getrandbits(128)), "project_id": project.pk, "created_at": now,
                  "updated_at": now,
                  "title": f"Seeded task {index}: {rng.choice(NODE_IDS)} for feature {index % 97}",
                  "goal_text": "A seeded task of the runs list."} for index in range(-(-count // RUNS_PER_TASK))]
        _rows_insert(Task, tasks)
        for start in range(0, count, BATCH):
            runs, rows = [], []
            for index in range(start, min(count, start + BATCH)):
                created = now - timedelta(seconds=rng.uniform(0, 365 * 86400))
                statuses, weights = choices[now - created < UNDER_WAY_FOR]
                status = rng.choices(statuses, weights)[0]
                run = {"run_id": uuid.UUID(int=rng.getrandbits(128)), "status": status, "created_at": created,
                       "task_id": tasks[index // RUNS_PER_TASK]["task_id"], "stage": rng.choice(ORG_NODES),
                       "manifest_version": 2, "started_at": created + timedelta(seconds=5), "finished_at": None}
                if status in WorkGraphRun.FINISHED_STATUSES:
                    run["finished_at"] = run["started_at"] + timedelta(seconds=rng.uniform(30, 3600))
                run_rows = _attempts(run, rng=rng, index=index)
                run["graph_manifest"] = {"nodes": [{"node_id": row["node_id"]} for row in run_rows[1:]], "edges": []}
                costs = [row["cost_usd"] for row in run_rows if row["cost_usd"] is not None]
                run["cost_usd"] = sum(costs, Decimal(0)) if costs else None
                runs.append(run)
                rows += run_rows
            _rows_insert(WorkGraphRun, runs)
            _rows_insert(WorkNodeExecution, rows)
            attempts += len(rows)
    return Seeded(project=project, tasks=len(tasks), runs=count, attempts=attempts)


def _attempts(run: dict[str, Any], *, rng: random.Random, index: int) -> list[dict[str, Any]]:
    finished = run["finished_at"] or run["started_at"]
    planning = {"run_id": run["run_id"], "node_id": PLANNING_NODE_ID, "subagent_type": "planner", "cause": "planning",
                "status": "succeeded", "agent_calls": 1, "cost_usd": _cost(rng), "input_tokens": 3000,
                "output_tokens": 800, "ready_at": run["created_at"], "started_at": run["created_at"],
                "finished_at": run["started_at"]}
    nodes = [*rng.sample(NODE_IDS, rng.randint(3, 5)), f"feature_{index % FEATURES}"]
    rows = [planning]
    for position, node_id in enumerate(nodes):
        ended = run["status"] if position == len(nodes) - 1 else "succeeded"
        rows.append({
            "run_id": run["run_id"], "node_id": node_id, "subagent_type": ORG_NODES[position % len(ORG_NODES)],
            "status": _attempt_status(ended), "agent_calls": rng.randint(1, 3), "cost_usd": _cost(rng),
            "input_tokens": rng.randint(500, 20000), "output_tokens": rng.randint(100, 4000),
            "num_turns": rng.randint(1, 12), "ready_at": run["started_at"], "started_at": run["started_at"],
            "finished_at": finished,
        })
    for row in rows:
        row["node_exec_id"] = uuid.UUID(int=rng.getrandbits(128))
        row["created_at"] = row["ready_at"]
    return rows


def _attempt_status(run_status: str) -> str:
    return {"planning_failed": "failed", "rejected": "cancelled", "awaiting_approval": "pending"}.get(
        run_status, run_status)


def _cost(rng: random.Random) -> Decimal | None:
    if rng.random() < 0.05:
        return None
    return Decimal(str(round(rng.lognormvariate(-3.5, 1.2), 6)))


def _rows_insert(model: type[Model], rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` (column values by attname; every other column its field's default) as they are:
    by COPY on PostgreSQL, a prepared INSERT elsewhere. No model is built per row, no ``auto_now_add``
    rewrites a seeded moment."""
    fields = [field for field in model._meta.concrete_fields]
    template = model()
    defaults = {field.attname: field.get_db_prep_save(getattr(template, field.attname), connection) for field in fields}
    json_fields = {field.attname for field in fields if isinstance(field, JSONField)}
    columns = [field.attname for field in fields]
    values = [
        [connection.ops.adapt_json_value(row[name], None) if name in json_fields and name in row
         else row.get(name, defaults[name]) for name in columns]
        for row in rows
    ]
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field in fields)
    table = quote(model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in values:
                    copy.write_row(row)
        else:
            # SQLite's driver takes no UUID, Decimal or aware datetime: each value as its field stores it.
            values = [[field.get_db_prep_save(value, connection) if field.attname not in json_fields else value
                       for field, value in zip(fields, row, strict=True)] for row in values]
            marks = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", values)  # noqa: S608
