"""A wide fan-out gets a few jobs at once; they drain the rest from the database, and whatever still
waits a moment later gets jobs of its own, a few at a time."""

from __future__ import annotations

import pytest

from graphs.engine import attempt, run_start, scheduler
from graphs.models import WorkGraphRun
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db

LEAVES = 12


@pytest.fixture
def fan_out(task):
    leaves = [f"leaf{i:02d}" for i in range(LEAVES)]
    nodes = [node("root"), *(node(leaf, "root") for leaf in leaves), node("join", *leaves)]
    return planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})


@pytest.fixture(autouse=True)
def few_jobs(monkeypatch):
    monkeypatch.setattr(scheduler, "FAN_OUT_JOBS", 3)
    monkeypatch.setattr(scheduler, "DISPATCH_EVERY_SECONDS", 0.05)


def test_quick_nodes_are_drained_by_the_job_that_readied_them(fan_out, scripted_runner, inline_executor):
    run_start(run=fan_out)

    # root's job runs root, then every leaf (one claimed as root's dependant, the others from the
    # database) and the join. Three leaves had jobs of their own, which find them taken; the one
    # dispatch pass finds nothing left waiting.
    assert inline_executor.drain() == 1 + 3 + 1
    assert WorkGraphRun.objects.get(pk=fan_out.pk).status == "succeeded"
    assert sorted(node_id for node_id, _ in scripted_runner.node_calls()) == sorted(latest(fan_out))
    assert not fan_out.executions.filter(resubmits__gt=0).exists()


def test_attempts_left_waiting_get_jobs_a_few_at_a_time(fan_out, scripted_runner, inline_executor, monkeypatch):
    # Jobs that never go on to another node: as when every node is slow.
    monkeypatch.setattr(attempt, "CONTINUE_FOR_SECONDS", 0.0)
    run_start(run=fan_out)
    inline_executor.drain()

    assert WorkGraphRun.objects.get(pk=fan_out.pk).status == "succeeded"
    node_calls = [node_id for node_id, _ in scripted_runner.node_calls()]
    assert sorted(node_calls) == sorted(latest(fan_out))  # each node ran once
    # Three leaves had jobs when root finished; the nine others got theirs from the dispatch passes.
    dispatched = fan_out.executions.filter(resubmits=1).values_list("node_id", flat=True)
    assert len(dispatched) == LEAVES - 3
    assert set(dispatched) <= {f"leaf{i:02d}" for i in range(LEAVES)}
