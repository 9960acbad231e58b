"""A collaboration report is keyed by its digest: accepted once, answered the same way on every replay
(sent again or ten times at once), and refused for a node whose dependencies have not succeeded."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from graphs.engine import run_start
from graphs.models import ReportReceipt, WorkGraphRun
from tests.clients import signed_in
from tests.run_builders import edges_for, node, planned_run

URL = "/api/v1/collaboration/tasks/callback/report"


def post(client, body: dict):
    return client.post(URL, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def started(task, scripted_runner, inline_executor) -> WorkGraphRun:
    """A running run of external nodes a → b whose node jobs were dropped: an outside bot reports "a"."""
    nodes = [node("a", executor="external", on_fail={"action": "retry_self", "max_attempts": 3}),
             node("b", "a", executor="external")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.discard()
    return run


def failed_report(task) -> dict:
    return {"loop_task_id": f"{task.pk}::a", "result": {"success": False, "data": {}, "gaps": ["no tests"]}}


@pytest.mark.django_db
def test_the_same_failed_report_three_times_fails_one_attempt_and_answers_alike(alice, task, started):
    api = signed_in(alice)

    answers = [post(api, failed_report(task)) for _ in range(3)]

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    first, *replays = [answer.json()["data"] for answer in answers]
    assert first["changed"] is True and first["status"] == "failed"
    assert replays == [{**first, "changed": False}] * 2
    assert list(started.executions.filter(node_id="a").values_list("attempt", "status").order_by("attempt")) == [
        (1, "failed"), (2, "queued")]
    assert WorkGraphRun.objects.get(pk=started.pk).status == "running"
    assert ReportReceipt.objects.filter(run=started, node_id="a").count() == 1


@pytest.mark.django_db
def test_a_report_for_a_node_whose_upstream_has_not_succeeded_is_refused(alice, task, started):
    report = {"loop_task_id": f"{task.pk}::b", "result": {"success": True, "data": {"result": "done"}, "gaps": []}}

    response = post(signed_in(alice), report)

    assert response.status_code == 409
    assert response.json()["code"] == "dependencies_unmet"
    assert "waits on 'a'" in response.json()["message"]
    assert started.executions.get(node_id="b").status == "pending"
    assert not ReportReceipt.objects.filter(run=started, node_id="b").exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_ten_identical_reports_at_once_are_accepted_once_and_all_answered_alike(alice, task, started):
    def report(_: int) -> tuple[int, dict]:
        try:
            response = post(signed_in(alice), failed_report(task))
            return response.status_code, response.json()["data"]
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(report, range(10)))

    assert {status for status, _ in answers} == {200}
    assert sorted(data["changed"] for _, data in answers) == [False] * 9 + [True]
    assert len({(data["node_exec_id"], data["status"]) for _, data in answers}) == 1
    assert started.executions.filter(node_id="a").count() == 2  # the failed attempt and its one retry
