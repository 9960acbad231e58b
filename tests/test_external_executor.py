"""An external node waits, running with no worker, for its collaboration report: the report completes
it (judged, or failing with its gaps), a replay changes nothing, a different report after it ended is
a 409, its deadline fails it ``external_timeout`` (on_fail applies), and a cancel ends it."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from graphs.engine import executions_reap, run_cancel, run_start
from graphs.logs.store import log_read
from graphs.models import WorkGraphRun, WorkNodeExecution
from tests.clients import signed_in
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db

URL = "/api/v1/collaboration/tasks/callback/report"


def external(node_id: str, *deps: str, **extra) -> dict:
    return node(node_id, *deps, executor="external", **extra)


def started(task, *nodes: dict) -> WorkGraphRun:
    run = planned_run(task, {"nodes": list(nodes), "edges": edges_for(list(nodes))})
    run_start(run=run)
    return run


def report(client, task, node_id: str, *, success: bool, result: str = "", gaps: tuple[str, ...] = ()):
    body = {"loop_task_id": f"{task.pk}::{node_id}",
            "result": {"success": success, "data": {"result": result}, "gaps": list(gaps)}}
    return client.post(URL, data=json.dumps(body), content_type="application/json")


def attempts(run: WorkGraphRun, node_id: str) -> list[tuple[int, str]]:
    return list(run.executions.filter(node_id=node_id).order_by("attempt").values_list("attempt", "status"))


def events(execution: WorkNodeExecution) -> list[str]:
    return [line["event"] for line in log_read(log_file=execution.log_file)]


def test_an_external_node_waits_running_with_no_worker_and_calls_no_agent(task, scripted_runner, inline_executor):
    run = started(task, node("a"), external("ext", "a", deadline_seconds=600))

    inline_executor.drain_due()  # a, and ext, which is handed out

    waiting = latest(run)["ext"]
    assert (waiting.status, waiting.worker) == ("running", "external")
    assert timedelta(seconds=590) < waiting.deadline_at - waiting.started_at <= timedelta(seconds=601)
    assert "Do ext." in waiting.input_payload["prompt"] and waiting.input_payload["upstream"] == ["a"]
    assert scripted_runner.node_calls() == [("a", 1)]
    assert events(waiting)[-1] == "external_wait"
    assert inline_executor.pending() == 1  # only its deadline's check is left; no job holds the wait


def test_a_success_report_completes_the_waiting_attempt_and_the_run_goes_on(alice, task, scripted_runner,
                                                                             inline_executor):
    run = started(task, external("ext"), node("after", "ext"))
    inline_executor.drain_due()

    answer = report(signed_in(alice), task, "ext", success=True, result="the external work")

    assert answer.status_code == 200, answer.content
    assert answer.json()["data"]["changed"] is True and answer.json()["data"]["status"] == "succeeded"
    done = latest(run)["ext"]
    assert done.output_payload["text"] == "the external work"
    assert done.judgment_result["kind"] == "report"
    assert done.worker == f"callback:{alice.username}"
    inline_executor.drain_due()  # "after"; ext's deadline check is not due
    run.refresh_from_db()
    assert run.status == "succeeded"
    assert latest(run)["after"].input_payload["upstream"] == ["ext"]


def test_a_reported_success_is_judged_by_the_nodes_judgment(alice, task, scripted_runner, inline_executor):
    judged = {"judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"},
              "on_fail": {"action": "retry_self", "max_attempts": 2}}
    run = started(task, external("ext", **judged))
    inline_executor.drain_due()

    answer = report(signed_in(alice), task, "ext", success=True, result="VERDICT: FAIL — the numbers are off")

    assert answer.json()["data"]["status"] == "failed"
    first = run.executions.get(node_id="ext", attempt=1)
    assert first.judgment_result["kind"] == "mechanical" and first.judgment_result["ok"] is False
    assert first.output_payload["text"].startswith("VERDICT: FAIL")
    assert attempts(run, "ext") == [(1, "failed"), (2, "queued")]


def test_a_failure_report_turns_its_gaps_into_the_issues_that_drive_on_fail(alice, task, scripted_runner,
                                                                            inline_executor):
    run = started(task, external("ext", on_fail={"action": "retry_self", "max_attempts": 2}))
    inline_executor.drain_due()

    answer = report(signed_in(alice), task, "ext", success=False, result="half of it", gaps=("no tests",))

    assert answer.json()["data"]["status"] == "failed"
    first = run.executions.get(node_id="ext", attempt=1)
    assert first.judgment_result["issues"] == ["no tests"]
    inline_executor.drain_due()  # the retry is handed out in turn, with the gap as feedback
    retry = run.executions.get(node_id="ext", attempt=2)
    assert (retry.status, retry.worker) == ("running", "external")
    assert "no tests" in retry.input_payload["prompt"]


def test_the_same_report_again_changes_nothing_and_a_different_one_is_a_409(alice, task, scripted_runner,
                                                                           inline_executor):
    run = started(task, external("ext"))
    inline_executor.drain_due()
    api = signed_in(alice)

    first = report(api, task, "ext", success=False, result="nothing", gaps=("the API is down",))
    again = report(api, task, "ext", success=False, result="nothing", gaps=("the API is down",))
    different = report(api, task, "ext", success=True, result="done after all")

    assert first.status_code == again.status_code == 200
    assert again.json()["data"] == {**first.json()["data"], "changed": False}
    assert different.status_code == 409 and different.json()["code"] == "already_finished"
    assert attempts(run, "ext") == [(1, "failed")]
    run.refresh_from_db()
    assert run.status == "failed"


def test_past_its_deadline_the_attempt_fails_external_timeout_and_on_fail_applies(alice, task, scripted_runner,
                                                                                 inline_executor):
    run = started(task, external("ext", deadline_seconds=1, on_fail={"action": "retry_self", "max_attempts": 2}))

    inline_executor.drain_due()
    inline_executor.drain(max_jobs=1)  # a second later, the deadline's check

    timed_out = run.executions.get(node_id="ext", attempt=1)
    assert timed_out.status == "failed"
    assert timed_out.judgment_result["kind"] == "external_timeout"
    assert timed_out.error.startswith("external_timeout: no report came within 1 s")
    assert "external_timeout" in events(timed_out)
    assert attempts(run, "ext") == [(1, "failed"), (2, "queued")]


def test_a_report_after_the_deadline_ended_the_node_is_a_409(alice, task, scripted_runner, inline_executor):
    run = started(task, external("ext", deadline_seconds=1))
    inline_executor.drain()

    late = report(signed_in(alice), task, "ext", success=True, result="sorry, late")

    assert late.status_code == 409 and late.json()["code"] == "already_finished"
    run.refresh_from_db()
    assert run.status == "failed" and "ext" in run.error


def test_the_reaper_times_out_a_wait_whose_deadline_job_was_lost(task, scripted_runner, inline_executor):
    run = started(task, external("ext", deadline_seconds=600))
    inline_executor.drain_due()
    inline_executor.discard()  # the deadline's job is lost with its broker
    run.executions.filter(node_id="ext").update(deadline_at=timezone.now() - timedelta(seconds=1))

    executions_reap()

    assert latest(run)["ext"].judgment_result["kind"] == "external_timeout"
    run.refresh_from_db()
    assert run.status == "failed"


def test_the_reaper_leaves_a_wait_within_its_deadline_alone_and_renews_its_heartbeat(task, scripted_runner,
                                                                                    inline_executor):
    run = started(task, external("ext", deadline_seconds=600))
    inline_executor.drain_due()
    long_ago = timezone.now() - timedelta(hours=1)
    run.executions.filter(node_id="ext").update(heartbeat_at=long_ago)

    reaped = executions_reap(stale_after=timedelta(seconds=1))

    waiting = latest(run)["ext"]
    assert reaped == []
    assert (waiting.status, waiting.worker) == ("running", "external")
    assert waiting.heartbeat_at > long_ago + timedelta(minutes=59)


def test_cancelling_the_run_cancels_the_wait_and_a_later_report_is_a_409(alice, task, scripted_runner,
                                                                         inline_executor):
    run = started(task, external("ext", deadline_seconds=1), node("after", "ext"))
    inline_executor.drain_due()

    run_cancel(run=run)

    run.refresh_from_db()
    waiting = latest(run)["ext"]
    assert run.status == "cancelled"
    assert (waiting.status, waiting.error) == ("cancelled", "stopped: the run was cancelled")
    assert waiting.log_file.status == "closed"
    late = report(signed_in(alice), task, "ext", success=True, result="done")
    assert late.status_code == 409 and late.json()["code"] == "already_finished"
    inline_executor.drain()  # the deadline's check, a second later, finds nothing to do
    assert latest(run)["ext"].status == "cancelled"
