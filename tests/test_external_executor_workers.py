"""An external node's wait holds no worker: on a one-thread embedded executor, and on a real Celery
worker, other work goes on while it waits, and its report (or its deadline) ends it."""

from __future__ import annotations

import json

import pytest

from graphs.engine import run_start, run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import WorkNodeExecution
from tests import factories
from tests.celery_worker import wait_until
from tests.clients import signed_in
from tests.run_builders import edges_for, latest, node, planned_run

URL = "/api/v1/collaboration/tasks/callback/report"


def planned(task, *nodes: dict):
    return planned_run(task, {"nodes": list(nodes), "edges": edges_for(list(nodes))})


def waiting(run) -> bool:
    return WorkNodeExecution.objects.filter(run=run, node_id="ext", status="running", worker="external").exists()


def report_success(user, task, text: str):
    body = {"loop_task_id": f"{task.pk}::ext", "result": {"success": True, "data": {"result": text}, "gaps": []}}
    return signed_in(user).post(URL, data=json.dumps(body), content_type="application/json")


@pytest.mark.django_db(transaction=True)
def test_on_a_one_thread_executor_other_runs_go_on_while_an_external_node_waits(alice, task, project,
                                                                                scripted_runner):
    previous = executor_set(ThreadExecutor(workers=1))
    try:
        outside = planned(task, node("ext", executor="external", deadline_seconds=600), node("after", "ext"))
        run_start(run=outside)
        wait_until(lambda: waiting(outside), timeout=20, message=lambda: f"ext is {latest(outside)}")

        other = planned(factories.TaskFactory(project=project, created_by=alice), node("x"), node("y", "x"))
        run_start(run=other)
        other = run_wait_finished(run_id=other.run_id, timeout=20)
        assert other.status == "succeeded"  # the only worker thread was free

        assert report_success(alice, task, "done outside").status_code == 200
        outside = run_wait_finished(run_id=outside.run_id, timeout=20)
    finally:
        executor_set(previous)
    assert outside.status == "succeeded"
    assert latest(outside)["ext"].output_payload["text"] == "done outside"


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_on_a_celery_worker_a_report_completes_the_wait_and_a_deadline_fails_the_next(alice, task, project,
                                                                                     workers):
    worker = workers("external", WORKGRAPH_AGENT="offline", WORKGRAPH_OFFLINE_LINE_DELAY="0")
    reported = planned(task, node("ext", executor="external", deadline_seconds=600), node("after", "ext"))
    run_start(run=reported)
    wait_until(lambda: waiting(reported), timeout=60, message=lambda: worker.log_text()[-3000:])

    assert report_success(alice, task, "done outside").status_code == 200
    reported = run_wait_finished(run_id=reported.run_id, timeout=60)
    assert reported.status == "succeeded", worker.log_text()[-3000:]

    late_task = factories.TaskFactory(project=project, created_by=alice)
    timed = planned(late_task, node("ext", executor="external", deadline_seconds=2))
    run_start(run=timed)
    timed = run_wait_finished(run_id=timed.run_id, timeout=60)
    assert timed.status == "failed", worker.log_text()[-3000:]
    assert latest(timed)["ext"].judgment_result["kind"] == "external_timeout"
