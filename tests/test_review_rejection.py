"""A reviewer's no is its own status: a rejected plan and a rejected append end the run ``rejected`` (not
``failed``), the task follows, and every surface — pages, the runs list and its filter, the API and its
schema, the live events — says ``rejected``. A rejection without a reason is refused before anything moves."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from graphs.engine.review import REASON_NEEDED, run_plan_reject
from graphs.errors import WorkGraphError
from graphs.models import WorkGraphRun
from graphs.reads.live import run_snapshot_read
from tests.clients import signed_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def waiting(task):
    return planned_run(task, {"nodes": [node("spec")], "edges": []}, status="awaiting_approval")


def test_a_rejected_plan_ends_the_run_and_its_task_rejected_with_the_reviewers_words(waiting, task, bob,
                                                                                      run_events_heard):
    run = run_plan_reject(run=waiting, reviewer=bob, comment="the plan skips the tests")
    task.refresh_from_db()

    assert (run.status, run.review_decision, run.error_code) == ("rejected", "rejected", "")
    assert run.error == "plan rejected by bob: the plan skips the tests" and run.finished_at is not None
    assert (task.status, task.outcome["run_status"], task.outcome["error"]) == ("rejected", "rejected", run.error)
    assert {"event": "run_status", "run_id": str(run.pk), "status": "rejected",
            "error": run.error} in run_events_heard
    assert not run.is_forkable() and run.is_finished()


@pytest.mark.parametrize("comment", ["", "  \n "])
def test_a_rejection_without_a_reason_is_refused_and_the_run_still_waits(waiting, bob, run_events_heard, comment):
    with pytest.raises(WorkGraphError, match=re.escape(REASON_NEEDED)):
        run_plan_reject(run=waiting, reviewer=bob, comment=comment)

    assert WorkGraphRun.objects.get(pk=waiting.pk).status == "awaiting_approval"
    assert run_events_heard == []


def test_the_page_refuses_an_empty_reason_with_words_and_moves_nothing(waiting, bob):
    response = signed_in(bob).post(f"/runs/{waiting.pk}/reject/", {"comment": " "}, follow=True)

    assert REASON_NEEDED in response.content.decode()
    assert WorkGraphRun.objects.get(pk=waiting.pk).status == "awaiting_approval"


def test_every_surface_reads_rejected(waiting, task, alice, bob):
    run_plan_reject(run=waiting, reviewer=bob, comment="too broad")
    client = signed_in(alice)

    task_page = client.get(reverse("task_detail", args=[task.pk])).content.decode()
    assert re.search(r"<h1>.*?data-status=\"rejected\"", task_page, re.S)
    run_page = client.get(reverse("run_graph", args=[waiting.pk])).content.decode()
    assert re.search(r'id="run-status"><span[^>]*data-status="rejected"', run_page)
    assert client.get(f"/api/tasks/{task.pk}").json()["status"] == "rejected"
    assert client.get(f"/api/runs/{waiting.pk}").json()["status"] == "rejected"
    assert run_snapshot_read(run_id=waiting.pk)["status"] == "rejected"

    listed = client.get("/runs/?status=rejected").content.decode()
    assert f'data-run-id="{waiting.pk}"' in listed and '<option value="rejected" selected>Rejected</option>' in listed
    assert f'data-run-id="{waiting.pk}"' not in client.get("/runs/?status=failed").content.decode()
    api = client.get("/api/runs", {"status": "rejected"}).json()
    assert [item["status"] for item in api["items"]] == ["rejected"]
    assert client.get("/api/runs", {"status": "failed"}).json()["count"] == 0


def test_the_api_schema_names_rejected_among_the_statuses(alice):
    schema = signed_in(alice).get("/api/openapi.json").json()
    for name in ("RunOut", "RunListItemOut", "TaskOut"):
        assert "rejected" in schema["components"]["schemas"][name]["properties"]["status"]["enum"], name


def test_the_api_refuses_an_empty_reason_and_takes_a_real_one(waiting, bob):
    client = signed_in(bob)
    empty = client.post(f"/api/runs/{waiting.pk}/reject", data=json.dumps({"comment": " "}),
                        content_type="application/json")
    assert empty.status_code == 400 and "needs a comment" in json.dumps(empty.json())

    taken = client.post(f"/api/runs/{waiting.pk}/reject", data=json.dumps({"comment": "no"}),
                        content_type="application/json")
    assert taken.status_code == 200 and taken.json()["status"] == "rejected"
