"""The engine on real Celery workers and a real Redis: a pipeline, a worker crash, redelivery, lost jobs.

The workers are ``celery -A console worker`` subprocesses (prefork, two processes) on the test
database, each in its own process group; the agent is the offline one (outside the engine under test)
slowed by a line delay so a node takes a moment. Every wait polls the database against a deadline.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.utils import timezone

from graphs.engine import pipeline_start, run_start
from graphs.executors import CeleryExecutor, InlineExecutor, executor_set
from graphs.logs.store import log_read
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun, WorkNodeExecution
from tests.celery_worker import wait_until
from tests.run_builders import edges_for, lanes_manifest, latest, node, node_rows, planned_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

PIPELINE_TIMEOUT = 120.0
CRASH_RUN_TIMEOUT = 120.0


def _events(execution: WorkNodeExecution) -> list[str]:
    return [line["event"] for line in log_read(log_file=execution.log_file)]


def test_a_pipeline_runs_end_to_end_on_a_celery_worker(task, workers):
    worker = workers("pipeline", WORKGRAPH_AGENT="offline", WORKGRAPH_OFFLINE_LINE_DELAY="0.005")

    pipeline_start(task=task)

    wait_until(
        lambda: Task.objects.get(pk=task.pk).status in {"succeeded", "failed", "cancelled"},
        timeout=PIPELINE_TIMEOUT,
        message=lambda: f"the task is still {Task.objects.get(pk=task.pk).status}:\n{worker.log_text()[-4000:]}",
    )
    task.refresh_from_db()
    run = WorkGraphRun.objects.get(task=task)
    assert (task.status, task.outcome["verdict"]) == ("succeeded", "PASS"), task.outcome
    assert run.status == "succeeded"
    planning = run.executions.filter(node_id__startswith=PLANNING_NODE_ID).order_by("created_at")
    assert [(p.node_id, p.status) for p in planning] == [
        ("__planning__", "succeeded"),
        ("__planning__:coder", "succeeded"),
        ("__planning__:validator", "succeeded"),
    ]
    rows = latest(run)
    assert {row.subagent_type for row in rows.values()} == {"planner", "coder", "validator"}
    assert {node_id: row.status for node_id, row in rows.items() if row.status != "succeeded"} == {}
    # The offline agent fails each loop_back node's first judgment: the loop-backs ran on the worker too.
    assert node_rows(run).filter(cause="loop_back").exists()


def test_a_killed_worker_loses_no_node_and_commits_no_result_twice(task, workers):
    crash_env = {
        "WORKGRAPH_AGENT": "offline",
        # Four lines per node: about a second of agent work, long enough to die in the middle of it.
        "WORKGRAPH_OFFLINE_LINE_DELAY": "0.25",
        "WORKGRAPH_HEARTBEAT_SECONDS": "0.5",
        "WORKGRAPH_REAP_AFTER_SECONDS": "3",
        "WORKGRAPH_REAP_INTERVAL_SECONDS": "1",
    }
    # The default prefork pool, killed as a whole group: the machine dies, no child finishes its node,
    # no message is acknowledged or handed back, and the nodes in flight keep their status running.
    doomed = workers("doomed", **crash_env)
    run = planned_run(task, lanes_manifest(lanes=4, length=7))
    run_start(run=run)

    wait_until(
        lambda: node_rows(run).filter(status="succeeded").count() >= 3
        and node_rows(run).filter(status="running").exists(),
        timeout=60,
        message=lambda: f"no node running after some succeeded; worker log:\n{doomed.log_text()[-3000:]}",
    )
    doomed.kill()
    dead = list(node_rows(run).filter(status="running").values_list("pk", flat=True))
    assert dead, "the worker died between nodes; nothing was caught mid-way"

    # The replacement runs beat too: the reaper on its schedule finds the rows the dead worker held.
    replacement = workers("replacement", beat=True, **crash_env)
    wait_until(
        lambda: WorkGraphRun.objects.get(pk=run.pk).is_finished(),
        timeout=CRASH_RUN_TIMEOUT,
        message=lambda: f"the run is still {WorkGraphRun.objects.get(pk=run.pk).status}:\n"
        f"{replacement.log_text()[-3000:]}",
    )

    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    succeeded = Counter(node_rows(run).filter(status="succeeded").values_list("node_id", flat=True))
    assert len(succeeded) == 30
    assert set(succeeded.values()) == {1}, "a node committed more than one result"
    for row in WorkNodeExecution.objects.filter(pk__in=dead):
        assert row.status == "failed"
        assert row.error.startswith(f"worker {row.worker} stopped (no heartbeat since")
        assert "worker_lost" in _events(row)
        retry = run.executions.get(node_id=row.node_id, attempt=row.attempt + 1)
        assert (retry.cause, retry.status) == ("transient_retry", "succeeded")
    assert node_rows(run).filter(status="failed").count() == len(dead)


# Celery's worker log line for a finished task.
_JOB_DONE = re.compile(r"Task graphs\.job\[[0-9a-f-]+\] succeeded in")


class _TwiceExecutor(CeleryExecutor):
    """Publishes every node job twice, like a broker redelivering a message after a lost ack."""

    def submit(self, name: str, arg: str, *, delay: float = 0.0) -> None:
        super().submit(name, arg, delay=delay)
        if name == "node_execute":
            super().submit(name, arg, delay=delay)


def test_a_job_delivered_twice_runs_its_node_once(task, workers, broker):
    worker = workers("twice", WORKGRAPH_AGENT="offline", WORKGRAPH_OFFLINE_LINE_DELAY="0.05")
    worker.wait_ready()
    executor_set(_TwiceExecutor(broker_url=broker.url, queue=broker.queue))
    nodes = [node("left"), node("right")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)

    # Both copies of both jobs reach the two pool processes at about the same time, and all four finish.
    wait_until(lambda: len(_JOB_DONE.findall(worker.log_text())) >= 4, timeout=30,
               message=lambda: f"the worker did not finish four jobs:\n{worker.log_text()[-3000:]}")
    wait_until(lambda: WorkGraphRun.objects.get(pk=run.pk).is_finished(),
               timeout=30, message=lambda: f"the run is still {WorkGraphRun.objects.get(pk=run.pk).status}")
    assert len(_JOB_DONE.findall(worker.log_text())) == 4
    run.refresh_from_db()
    assert run.status == "succeeded"
    rows = list(node_rows(run))
    assert sorted((row.node_id, row.attempt, row.status) for row in rows) == [
        ("left", 1, "succeeded"), ("right", 1, "succeeded")
    ]
    for row in rows:
        lines = log_read(log_file=row.log_file)
        assert [line["event"] for line in lines].count("node_start") == 1
        assert [line["event"] for line in lines].count("agent_call") == 1
        assert [line["committed"] for line in lines if line["event"] == "node_finished"] == [True]


def test_the_reaper_on_beat_recovers_a_lost_job_and_a_run_left_unadvanced(task, workers, broker):
    """Two crash windows between a commit and the next step, which only the reaper can close."""
    lost = InlineExecutor()  # collects jobs and is never drained: they are the messages that never left
    executor_set(lost)
    never_sent = planned_run(task, _chain("a", "b"))
    run_start(run=never_sent)  # "a" is queued, its job lost
    never_advanced = planned_run(task, _chain("x", "y"))
    run_start(run=never_advanced)
    # "x" finished on a worker that died before advancing the run: "y" stays pending, nothing is active.
    now = timezone.now()
    never_advanced.executions.filter(node_id="x").update(
        status="succeeded", worker="gone:1:1", started_at=now, heartbeat_at=now, finished_at=now,
        output_payload={"text": "x was done"},
    )
    assert lost.pending() == 2
    executor_set(broker.executor())

    workers("reaper", beat=True, WORKGRAPH_AGENT="offline", WORKGRAPH_OFFLINE_LINE_DELAY="0",
            WORKGRAPH_REAP_AFTER_SECONDS="1", WORKGRAPH_REAP_INTERVAL_SECONDS="1")

    for run, node_ids in ((never_sent, ("a", "b")), (never_advanced, ("x", "y"))):
        wait_until(lambda run=run: WorkGraphRun.objects.get(pk=run.pk).is_finished(), timeout=60,
                   message=lambda run=run: f"run {run.pk} is still {WorkGraphRun.objects.get(pk=run.pk).status}")
        run.refresh_from_db()
        assert run.status == "succeeded"
        assert sorted(node_rows(run).values_list("node_id", "attempt", "status")) == [
            (node_id, 1, "succeeded") for node_id in node_ids
        ]
    assert latest(never_advanced)["x"].output_payload["text"] == "x was done"


def _chain(*node_ids: str) -> dict:
    nodes = [node(node_id, *node_ids[:index][-1:]) for index, node_id in enumerate(node_ids)]
    return {"nodes": nodes, "edges": edges_for(nodes)}
