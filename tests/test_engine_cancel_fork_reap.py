"""Cancel stops running agents, fork reruns only from the chosen node, the reaper recovers lost work."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from graphs.engine import EngineError, executions_reap, run_cancel, run_fork, run_start, run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests.run_builders import edges_for, latest, node, planned_run
from tests.scripted_agents import wait_for_cancel


def chain() -> dict:
    nodes = [node("plan"), node("build", "plan"), node("check", "build"), node("ship", "check")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_a_running_agent_and_cancels_waiting_nodes(task, scripted_runner, settings):
    settings.WORKGRAPH_HEARTBEAT_SECONDS = 0.05
    started = threading.Event()

    def slow(call):
        started.set()
        return wait_for_cancel(call)

    scripted_runner.replies[("node", "build")] = slow
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        run = planned_run(task, chain())
        run_start(run=run)
        assert started.wait(10), "the build node never started"
        run_cancel(run=run)
        run = run_wait_finished(run_id=run.run_id, timeout=10)
    finally:
        executor_set(previous)
    rows = latest(run)
    assert run.status == "cancelled"
    assert rows["build"].status == "cancelled"
    assert rows["build"].error == "stopped: the run was cancelled"
    assert rows["check"].status == rows["ship"].status == "cancelled"
    assert run.task.__class__.objects.get(pk=run.task_id).status == "cancelled"


@pytest.mark.django_db
def test_fork_reuses_upstream_outputs_and_reruns_from_the_chosen_node(task, scripted_runner, inline_executor):
    run = planned_run(task, chain())
    run_start(run=run)
    inline_executor.drain()
    scripted_runner.calls.clear()

    fork = run_fork(run=run, node_id="check")
    inline_executor.drain()
    fork.refresh_from_db()

    assert fork.status == "succeeded"
    assert (fork.forked_from_id, fork.fork_node_id) == (run.run_id, "check")
    assert scripted_runner.node_calls() == [("check", 1), ("ship", 1)]
    rows = latest(fork)
    assert [rows[n].cause for n in ("plan", "build", "check", "ship")] == ["fork", "fork", "fork", "initial"]
    original_build = latest(run)["build"]
    assert rows["build"].output_payload["text"] == original_build.output_payload["text"]
    assert rows["build"].output_payload["reused_from"] == str(original_build.pk)
    assert fork.executions.filter(node_id="__planning__").exists()


@pytest.mark.django_db
def test_fork_refuses_a_node_that_is_not_in_the_run(task, scripted_runner, inline_executor):
    run = planned_run(task, chain(), status="failed")
    with pytest.raises(EngineError, match="node 'deploy' is not in run"):
        run_fork(run=run, node_id="deploy")


@pytest.mark.django_db
def test_the_reaper_fails_a_silent_execution_and_queues_a_retry(task, scripted_runner, inline_executor):
    run = planned_run(task, chain())
    run_start(run=run)
    first = run.executions.get(node_id="plan")
    # A worker claimed "plan" and then died: the row stays running with an old heartbeat.
    long_ago = timezone.now() - timedelta(minutes=10)
    WorkNodeExecution.objects.filter(pk=first.pk).update(
        status="running", worker="host:1:1", started_at=long_ago, heartbeat_at=long_ago
    )
    inline_executor.drain()  # the queued job finds the row already claimed and does nothing

    assert executions_reap(stale_after=timedelta(seconds=30)) == [str(first.pk)]
    inline_executor.drain()
    run.refresh_from_db()

    dead = WorkNodeExecution.objects.get(pk=first.pk)
    assert dead.status == "failed" and "worker host:1:1 stopped" in dead.error
    retry = latest(run)["plan"]
    assert (retry.attempt, retry.cause, retry.status) == (2, "transient_retry", "succeeded")
    assert run.status == "succeeded"
    assert executions_reap(stale_after=timedelta(seconds=30)) == []


@pytest.mark.django_db
def test_the_reaper_ends_a_run_whose_planning_worker_died(task):
    run = WorkGraphRun.objects.create(task=task, status="planning")
    long_ago = timezone.now() - timedelta(minutes=10)
    planning = WorkNodeExecution.objects.create(
        run=run, node_id="__planning__", subagent_type="planner", cause="planning", status="running",
        worker="host:2:2", started_at=long_ago, heartbeat_at=long_ago,
    )
    assert executions_reap(stale_after=timedelta(seconds=30)) == [str(planning.pk)]
    run.refresh_from_db()
    planning.refresh_from_db()
    assert planning.status == "failed"
    assert run.status == "planning_failed"
    assert "planning stopped: worker host:2:2 stopped" in run.error
    assert run.executions.count() == 1


@pytest.mark.django_db
def test_the_reaper_hands_out_a_lost_job_again_less_and_less_often(task, scripted_runner, inline_executor):
    run = planned_run(task, chain())
    run_start(run=run)
    assert inline_executor.discard() == 1  # the job of the queued "plan" never reached a worker
    queued = run.executions.get(node_id="plan")
    stale_after = timedelta(seconds=30)

    def queued_for(seconds: float) -> None:
        WorkNodeExecution.objects.filter(pk=queued.pk).update(ready_at=timezone.now() - timedelta(seconds=seconds))

    def resubmitted_ago(seconds: float) -> None:
        WorkNodeExecution.objects.filter(pk=queued.pk).update(
            resubmitted_at=timezone.now() - timedelta(seconds=seconds)
        )

    queued_for(10)
    executions_reap(stale_after=stale_after)
    assert inline_executor.pending() == 0, "a job queued for less than stale_after was handed out"

    queued_for(3600)
    executions_reap(stale_after=stale_after)
    executions_reap(stale_after=stale_after)
    assert inline_executor.discard() == 1
    # The second resubmission waits twice as long, the third four times, and so on.
    for seconds_since, handed_out in ((45, 0), (61, 1), (100, 0), (121, 1)):
        resubmitted_ago(seconds_since)
        executions_reap(stale_after=stale_after)
        assert inline_executor.discard() == handed_out, f"{seconds_since} s after the last resubmission"
    assert WorkNodeExecution.objects.get(pk=queued.pk).resubmits == 3
    # The last one was discarded above: hand it out once more, as the next pass would.
    resubmitted_ago(10_000)
    executions_reap(stale_after=stale_after)

    inline_executor.drain()
    assert run_wait_finished(run_id=run.run_id, timeout=5).status == "succeeded"
