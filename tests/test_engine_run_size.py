"""A node's finish sends the same statements whatever the size of its run: it reads and locks only what
its own dependants need, and the whole run once its stage is over."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.engine import node_execution_run, run_start, scheduler
from graphs.models import WorkGraphRun
from graphs.profiles.resolve import profiles_ensure_shipped
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

WIDTH = 4


def _name(layer: int, column: int) -> str:
    return f"l{layer}c{column % WIDTH}"


def _layered(layers: int) -> dict:
    """``layers`` of ``WIDTH`` nodes, each past the first fed by two of the layer before: its column's and
    the next one's (the shape of ``tests/bench/scale_big_graph.py``)."""
    nodes = [node(_name(layer, column), *([_name(layer - 1, column), _name(layer - 1, column + 1)] if layer else []))
             for layer in range(layers) for column in range(WIDTH)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def _finish(run: WorkGraphRun, node_id: str) -> list[str]:
    """Run ``node_id``'s queued attempt in this process; the statements it sent, their values left out.

    Its log lines are left out too: the log writer's thread sends them in batches as it finds them."""
    with CaptureQueriesContext(connection) as queries:
        node_execution_run(node_exec_id=run.executions.get(node_id=node_id, status="queued").pk)
    return [re.sub(r"'(?:[^']|'')*'|\b\d+\b", "?", query["sql"]) for query in queries
            if not query["sql"].startswith('INSERT INTO "graphs_executionlogline"')]


def _statements_by_step(task, layers: int) -> dict[str, list[str]]:
    """The statements of three finishes in a run of ``layers`` layers: a node whose dependants still wait on
    another, one that readies a dependant, and a node of the last layer while the rest of it runs."""
    run = planned_run(task, _layered(layers))
    run_start(run=run)
    sent = {"dependants wait": _finish(run, _name(0, 0)), "readies one": _finish(run, _name(0, 1))}
    for layer in range(layers - 1):
        for column in range(WIDTH):
            if (layer, column) not in ((0, 0), (0, 1)):
                _finish(run, _name(layer, column))
    sent["last layer"] = _finish(run, _name(layers - 1, 0))
    return sent


def test_a_nodes_finish_sends_the_same_statements_in_a_run_ten_times_larger(
    task, scripted_runner, inline_executor, monkeypatch
):
    # The live progress figure, recounted at most twice a second after the commit, is held still.
    monkeypatch.setattr(scheduler, "progress_due", lambda run_id: False)
    profiles_ensure_shipped()  # made on first use otherwise, in the first run's statements only
    small = _statements_by_step(task, 2)
    large = _statements_by_step(task, 20)

    assert large == small
    for step, statements in large.items():
        assert not any("COUNT(" in sql for sql in statements), (step, statements)
