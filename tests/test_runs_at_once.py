"""Many runs started together all succeed, and none waits behind the others for its turn: each run's
first node is claimed in the order the runs were started (their roots became ready), so a run started
early is never passed over for a later one. Every attempt records when it became ready and when a
worker claimed it, the figures ``tests/bench/bench_scale.py`` measures 200 runs at once by."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


def _five_nodes() -> dict:
    nodes = [node("root"), node("a", "root"), node("b", "root"), node("c", "a", "b"), node("d", "c")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def test_ten_runs_started_together_all_succeed_their_roots_claimed_in_turn(task, scripted_runner, inline_executor):
    runs = [planned_run(factories.TaskFactory(project=task.project), _five_nodes()) for _ in range(10)]
    for run in runs:
        run_start(run=run)
    inline_executor.drain()

    ids = [run.pk for run in runs]
    assert list(WorkGraphRun.objects.filter(pk__in=ids).values_list("status", flat=True)) == ["succeeded"] * 10
    attempts = WorkNodeExecution.objects.filter(run__in=ids, node_id__in=["root", "a", "b", "c", "d"])
    assert attempts.count() == 50
    assert not attempts.filter(ready_at__isnull=True).exists()
    assert all(row.started_at >= row.ready_at for row in attempts)
    roots = WorkNodeExecution.objects.filter(run__in=ids, node_id="root")
    by_ready = [row.run_id for row in roots.order_by("ready_at")]
    by_claim = [row.run_id for row in roots.order_by("started_at")]
    assert by_claim == by_ready == ids
