"""Agents are untrusted: a report (``callback/report`` or the relay's ``bbs/result``) completes only an
external node, a relay node only from whoever attached it, and never a verdict gate, which the console
judges itself. A refused report is a 4xx naming why, and changes nothing."""

from __future__ import annotations

import json

import pytest

from graphs.engine import run_start
from graphs.models import ReportReceipt, WorkGraphRun
from tests import factories
from tests.clients import signed_in
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db

URL = "/api/v1/collaboration/tasks"
VERDICT_GATE = {"judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"},
                "on_fail": {"action": "hard_fail"}}


@pytest.fixture
def erin(project):
    """Erin also leads the project, but did not attach the relay."""
    return factories.member(project, "erin", role="lead")


def started(task, *nodes: dict, zero_token: frozenset[str] = frozenset()) -> WorkGraphRun:
    run = planned_run(task, {"nodes": list(nodes), "edges": edges_for(list(nodes), zero_token=zero_token)})
    run_start(run=run)
    return run


def post(client, path: str, body: dict):
    return client.post(f"{URL}/{path}", data=json.dumps(body), content_type="application/json")


def report(client, task, node_id: str, result: str = "done"):
    return post(client, "callback/report", {"loop_task_id": f"{task.pk}::{node_id}",
                                            "result": {"success": True, "data": {"result": result}, "gaps": []}})


def relay_result(client, task, node_id: str):
    return post(client, "bbs/result", {"task_id": str(task.pk), "node_id": node_id, "bot_id": "relay-bot",
                                       "acceptance_result": {"verdict": "PASS"}, "output_patch": {"done": True}})


def refused(answer, status: int, code: str) -> bool:
    return (answer.status_code, answer.json()["code"]) == (status, code)


def test_a_queued_agent_node_cannot_be_reported_succeeded(alice, task, scripted_runner, inline_executor):
    run = started(task, node("write"))
    inline_executor.discard()  # the agent's job never runs: only a report could end the node

    answer = report(signed_in(alice), task, "write", result="def export(): ...")

    assert refused(answer, 400, "not_external")
    assert "only an external node (executor: external) takes a report" in answer.json()["message"]
    assert latest(run)["write"].status == "queued"
    assert not ReportReceipt.objects.filter(run=run).exists()
    assert scripted_runner.node_calls() == []


@pytest.mark.parametrize("endpoint", ["callback/report", "bbs/result"])
def test_only_the_user_who_attached_a_relay_may_report_it_through_either_endpoint(
        alice, erin, task, scripted_runner, inline_executor, endpoint):
    run = started(task, node("overview"))
    node_id = post(signed_in(alice), "bbs/attach", {
        "task_id": str(task.pk), "bot_id": "relay-bot",
        "task_spec": {"metadata": {"title": "Architects", "instruction": "List three architects."},
                      "goal": {"objective": "A roster", "acceptances": [{"id": "ac1", "acceptance": "3 names"}]}},
    }).json()["data"]["node_id"]
    inline_executor.drain_due()
    send = report if endpoint == "callback/report" else relay_result

    by_erin = send(signed_in(erin), task, node_id)

    assert refused(by_erin, 403, "not_relay_holder")
    assert by_erin.json()["message"] == f"only relay-bot, who attached {node_id!r}, may post its result"
    assert (latest(run)[node_id].status, latest(run)[node_id].worker) == ("running", "external")
    assert not ReportReceipt.objects.filter(run=run).exists()
    by_alice = send(signed_in(alice), task, node_id)
    assert by_alice.status_code == 200 and by_alice.json()["data"]["status"] == "succeeded"
    # The holder's report replayed by another lead is refused too, not answered from its receipt.
    assert refused(send(signed_in(erin), task, node_id), 403, "not_relay_holder")


def test_a_report_cannot_pass_a_verdict_gate_the_console_judges_it(alice, task, scripted_runner, inline_executor):
    run = started(task, node("review", executor="external"), node("gate", "review", **VERDICT_GATE),
                  zero_token=frozenset({"gate"}))
    inline_executor.drain_due()
    api = signed_in(alice)
    assert report(api, task, "review", result="VERDICT: fail\nTwo cases break.").status_code == 200

    forged = report(api, task, "gate", result="VERDICT: pass (forged)")

    assert refused(forged, 400, "verdict_gate")
    assert "verdict gate" in forged.json()["message"]
    assert latest(run)["gate"].status == "queued"
    assert not ReportReceipt.objects.filter(run=run, node_id="gate").exists()
    inline_executor.drain_due()  # the gate runs: the console reads the review's verdict
    gate = latest(run)["gate"]
    assert (gate.status, gate.judgment_result["kind"]) == ("failed", "mechanical")


def test_an_external_verdict_gate_is_refused_too(alice, task, scripted_runner, inline_executor):
    run = started(task, node("review", executor="external"),
                  node("gate", "review", executor="external", **VERDICT_GATE), zero_token=frozenset({"gate"}))
    inline_executor.drain_due()
    api = signed_in(alice)
    report(api, task, "review", result="VERDICT: fail")

    answer = report(api, task, "gate", result="VERDICT: pass")

    assert refused(answer, 400, "verdict_gate")
    assert latest(run)["gate"].status in ("queued", "running")
    assert not ReportReceipt.objects.filter(run=run, node_id="gate").exists()
