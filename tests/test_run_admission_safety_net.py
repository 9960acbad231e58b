"""The reaper admits a queued run whose admission job was lost: a lost hook strands no run."""

from __future__ import annotations

import pytest

from graphs.engine import executions_reap, run_start
from graphs.models import WorkGraphRun
from graphs.runs.status import run_status_set
from tests import factories
from tests.run_builders import edges_for, node, node_rows, planned_run

pytestmark = pytest.mark.django_db


def _planned(project) -> WorkGraphRun:
    nodes = [node("build"), node("check", "build")]
    return planned_run(factories.TaskFactory(project=project), {"nodes": nodes, "edges": edges_for(nodes)})


def test_the_reaper_admits_a_queued_run_once_a_slot_is_free(project, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    running, stranded = _planned(project), _planned(project)
    run_start(run=running)
    run_start(run=stranded)
    inline_executor.discard()
    running.refresh_from_db()

    executions_reap()
    assert WorkGraphRun.objects.get(pk=stranded.pk).status == "queued"  # no slot free yet

    run_status_set(run=running, status=WorkGraphRun.Status.CANCELLED, allowed_from=[WorkGraphRun.Status.RUNNING])
    assert inline_executor.discard() == 1  # the admission job, lost
    executions_reap()

    stranded.refresh_from_db()
    assert stranded.status == "running" and stranded.started_at is not None
    assert sorted(node_rows(stranded).values_list("node_id", "status")) == [("build", "queued"), ("check", "pending")]
