"""The relay (bbs/attach → bbs/result): an outside bot attaches a node to a running run and only it may
post that node's result; a replay changes nothing, a different result after the end is a 409."""

from __future__ import annotations

import json

import pytest

from graphs.engine import run_start
from graphs.models import WorkGraphRun
from tests import factories
from tests.clients import signed_in
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db

URL = "/api/v1/collaboration/tasks"


@pytest.fixture
def erin(project):
    """Erin also leads the project, but did not attach the relay."""
    return factories.member(project, "erin", role="lead")


@pytest.fixture
def running(task, scripted_runner, inline_executor) -> WorkGraphRun:
    nodes = [node("overview")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)  # "overview" stays queued: the run is under way
    return run


def post(client, path: str, body: dict):
    return client.post(f"{URL}/{path}", data=json.dumps(body), content_type="application/json")


def attach(client, task, *, bot_id: str = "relay-bot", parent: str = "") -> object:
    return post(client, "bbs/attach", {
        "task_id": str(task.pk), "parent_node_id": parent or str(task.pk), "bot_id": bot_id,
        "task_spec": {"metadata": {"title": "Architects", "instruction": "List three architects."},
                      "goal": {"objective": "A roster", "acceptances": [{"id": "ac_arch", "acceptance": "3 names"}]}},
    })


def result(client, task, node_id: str, *, bot_id: str = "relay-bot", verdict: str = "PASS", patch=None):
    return post(client, "bbs/result", {
        "task_id": str(task.pk), "node_id": node_id, "bot_id": bot_id,
        "acceptance_result": {"verdict": verdict, "acceptances_metric": [{"id": "ac_arch", "met": verdict == "PASS"}]},
        "output_patch": patch if patch is not None else {"architects": ["A", "B", "C"]},
    })


def test_an_attached_relay_waits_for_its_result_and_completes_the_run(alice, task, running, inline_executor):
    api = signed_in(alice)

    attached = attach(api, task)
    inline_executor.drain_due()

    assert attached.status_code == 200, attached.content
    node_id = attached.json()["data"]["node_id"]
    assert node_id == "relay_1" and attached.json()["data"]["loop_task_id"] == f"{task.pk}::relay_1"
    waiting = latest(running)["relay_1"]
    assert (waiting.status, waiting.worker) == ("running", "external")
    assert "List three architects." in waiting.input_payload["prompt"]
    relay_node = WorkGraphRun.objects.get(pk=running.pk).graph_manifest["nodes"][-1]
    assert relay_node["relay"]["bot_id"] == "relay-bot" and relay_node["relay"]["user"] == "alice"

    posted = result(api, task, node_id)

    assert posted.status_code == 200 and posted.json()["data"]["status"] == "succeeded"
    assert json.loads(latest(running)["relay_1"].output_payload["text"]) == {"architects": ["A", "B", "C"]}
    running.refresh_from_db()
    assert running.status == "succeeded"


def test_the_same_result_again_changes_nothing_and_a_different_one_is_a_409(alice, task, running, inline_executor):
    api = signed_in(alice)
    node_id = attach(api, task).json()["data"]["node_id"]
    inline_executor.drain_due()

    first, again = result(api, task, node_id), result(api, task, node_id)
    different = result(api, task, node_id, patch={"architects": ["Z"]})

    assert again.json()["data"] == {**first.json()["data"], "changed": False}
    assert different.status_code == 409 and different.json()["code"] == "already_finished"


def test_only_the_user_and_bot_that_attached_may_post_the_result(alice, erin, charlie, task, running,
                                                                inline_executor):
    node_id = attach(signed_in(alice), task).json()["data"]["node_id"]
    inline_executor.drain_due()

    by_erin = result(signed_in(erin), task, node_id)
    by_another_bot = result(signed_in(alice), task, node_id, bot_id="impostor-bot")
    by_charlie = result(signed_in(charlie), task, node_id)

    assert by_erin.status_code == by_another_bot.status_code == 403
    assert by_erin.json()["message"] == "only relay-bot, who attached 'relay_1', may post its result"
    assert by_charlie.status_code == 404
    assert latest(running)["relay_1"].status == "running"


def test_a_second_relay_under_the_same_parent_is_a_409_and_the_same_attach_again_is_the_same_node(
        alice, erin, task, running):
    first = attach(signed_in(alice), task)

    again = attach(signed_in(alice), task)
    other = attach(signed_in(erin), task, bot_id="other-bot")
    elsewhere = attach(signed_in(erin), task, bot_id="other-bot", parent="overview")

    assert again.json()["data"]["node_id"] == first.json()["data"]["node_id"]
    assert other.status_code == 409 and other.json()["code"] == "relay_taken"
    assert "relay-bot already relays under the task" in other.json()["message"]
    assert elsewhere.status_code == 200 and elsewhere.json()["data"]["node_id"] == "relay_2"


def test_a_failed_relay_records_its_gaps(alice, task, running, inline_executor):
    api = signed_in(alice)
    node_id = attach(api, task).json()["data"]["node_id"]
    inline_executor.drain_due()

    posted = result(api, task, node_id, verdict="FAIL")

    assert posted.json()["data"]["status"] == "failed"
    assert latest(running)["relay_1"].judgment_result["issues"] == ["{'id': 'ac_arch', 'met': False}"]


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [("unknown parent", 400, "unknown_node"), ("finished run", 409, "not_running"),
     ("not a relay node", 400, "not_a_relay_node"), ("bad verdict", 400, "validation_error")],
)
def test_bad_relay_requests_are_refused_with_the_reason(alice, task, running, case, status, code):
    api = signed_in(alice)
    if case == "unknown parent":
        answer = attach(api, task, parent="ghost")
    elif case == "finished run":
        WorkGraphRun.objects.filter(pk=running.pk).update(status="failed")
        answer = attach(api, task)
    elif case == "not a relay node":
        answer = result(api, task, "overview")
    else:
        answer = result(api, task, "relay_1", verdict="MAYBE")

    assert (answer.status_code, answer.json()["code"]) == (status, code)
    assert [n["node_id"] for n in WorkGraphRun.objects.get(pk=running.pk).graph_manifest["nodes"]] == ["overview"]
