"""A node job runs the dependant it made ready itself, for a while, instead of a broker round trip each."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from graphs import engine
from graphs.engine import run_start
from graphs.models import WorkGraphRun
from tests.graphs import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


def _chain(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def test_a_chain_runs_in_the_job_that_started_it(task, scripted_runner, inline_executor):
    run = planned_run(task, _chain(6))
    run_start(run=run)

    assert inline_executor.drain() == 1
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert [call[0] for call in scripted_runner.node_calls()] == [f"n{i}" for i in range(6)]
    rows = latest(run)
    assert all(rows[f"n{i}"].started_at >= rows[f"n{i - 1}"].finished_at for i in range(1, 6))


def test_a_fan_out_keeps_one_branch_and_hands_out_the_others(task, scripted_runner, inline_executor):
    nodes = [node("root"), node("a", "root"), node("b", "root"), node("c", "root"), node("join", "a", "b", "c")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)

    # root's job goes on with "a"; "b" and "c" go through the executor; whichever finishes last runs "join".
    assert inline_executor.drain() == 3
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


def test_past_its_time_a_job_hands_every_dependant_out(task, scripted_runner, inline_executor, monkeypatch):
    monkeypatch.setattr(engine, "CONTINUE_FOR_SECONDS", 0.0)
    run = planned_run(task, _chain(6))
    run_start(run=run)

    assert inline_executor.drain() == 6
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"


def test_a_dependant_in_backoff_is_not_kept(task, scripted_runner, inline_executor):
    """A retry waiting out its backoff goes through the executor with its delay, never run early."""
    nodes = [node("first"), node("second", "first")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    run.executions.filter(node_id="second").update(not_before=timezone.now() + timedelta(seconds=0.3))
    assert inline_executor.drain() == 2
    rows = latest(run)
    assert (rows["second"].started_at - rows["first"].finished_at).total_seconds() >= 0.25
