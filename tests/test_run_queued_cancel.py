"""A queued run can be cancelled: it ends cancelled without ever starting, and is never admitted after."""

from __future__ import annotations

import pytest

from graphs.engine import run_cancel, run_start
from graphs.models import Task, WorkGraphRun
from tests import factories
from tests.run_builders import edges_for, node, node_rows, planned_run

pytestmark = pytest.mark.django_db


def _planned(project) -> WorkGraphRun:
    nodes = [node("build"), node("check", "build")]
    return planned_run(factories.TaskFactory(project=project), {"nodes": nodes, "edges": edges_for(nodes)})


def test_a_cancelled_queued_run_ends_without_starting_and_the_next_one_takes_the_slot(
    project, alice, scripted_runner, inline_executor, settings
):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    running, cancelled, admitted = _planned(project), _planned(project), _planned(project)
    for run in (running, cancelled, admitted):
        run_start(run=run)

    run_cancel(run=cancelled, by=alice)
    inline_executor.drain()

    cancelled.refresh_from_db()
    assert cancelled.status == "cancelled" and cancelled.started_at is None
    assert not node_rows(cancelled).exists()
    assert Task.objects.get(pk=cancelled.task_id).status == "cancelled"
    assert WorkGraphRun.objects.get(pk=running.pk).status == "succeeded"
    assert WorkGraphRun.objects.get(pk=admitted.pk).status == "succeeded"
