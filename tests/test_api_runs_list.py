"""GET /api/runs: the runs list of the console as the API serves it — the same filters, the same
envelope as the task list, and a number of queries that does not grow with the number of runs."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.tokens import token_create
from tests import factories
from tests.clients import signed_in
from tests.run_builders import many_runs, run_with_attempts

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice):
    return signed_in(alice)


def _ids(api, query: str = "") -> list[str]:
    response = api.get(f"/api/runs{query}")
    assert response.status_code == 200, response.content
    return [item["run_id"] for item in response.json()["items"]]


def test_each_item_says_what_the_runs_list_shows(api, task):
    started = timezone.now() - timedelta(minutes=5)
    run = run_with_attempts(task, status="succeeded", nodes=["a", "b"], costs=[Decimal("0.5"), Decimal("0.25")],
                            started_at=started, finished_at=started + timedelta(seconds=90), pipeline=True,
                            stage="validator")
    data = api.get("/api/runs").json()
    assert (data["count"], data["page"], data["pages"]) == (1, 1, 1)
    item = data["items"][0]
    assert item["run_id"] == str(run.pk) and item["task_id"] == str(task.pk)
    assert item["task_title"] == task.title and item["project"] == task.project.slug
    assert (item["status"], item["stage"], item["pipeline"]) == ("succeeded", "validator", True)
    assert item["duration_seconds"] == 90.0
    assert item["progress"]["total"] == 2 and item["progress"]["done"] == 2
    assert item["progress"]["summary"] == "2/2 done · 2 succeeded"
    assert Decimal(str(item["spend"]["cost_usd"])) == Decimal("0.75") and item["spend"]["agent_calls"] == 2


def test_it_takes_the_pages_filters(api, project, task):
    now = timezone.now()
    coded = run_with_attempts(task, status="failed", nodes=["impl_login"], org_node="coder",
                              costs=[Decimal("0.2")], created=now - timedelta(days=3))
    planned = run_with_attempts(factories.TaskFactory(project=project, title="Write the CSV export"),
                                nodes=["brd"], created=now)
    day = (now - timedelta(days=3)).date().isoformat()
    assert _ids(api, "?status=failed") == [str(coded.pk)]
    assert _ids(api, "?org_node=coder") == [str(coded.pk)]
    assert _ids(api, f"?created_from={day}&created_to={day}") == [str(coded.pk)]
    assert _ids(api, "?min_cost=0.1") == [str(coded.pk)]
    assert _ids(api, "?q=impl_login") == [str(coded.pk)]
    assert _ids(api, "?q=csv") == [str(planned.pk)]
    assert _ids(api, f"?project={project.slug}") == [str(planned.pk), str(coded.pk)]


def test_it_pages_with_the_task_lists_envelope(api, task):
    many_runs(task, 7)
    data = api.get("/api/runs?page_size=3&page=3").json()
    assert (data["count"], data["page"], data["pages"], len(data["items"])) == (7, 3, 3, 1)


@pytest.mark.parametrize(("query", "code"), [
    ("?status=done", "bad_status"),
    ("?page_size=101", "bad_page_size"),
    ("?created_from=yesterday", "validation_error"),
    ("?min_cost=-1", "validation_error"),
    ("?org_node=not%20a%20name", "validation_error"),
])
def test_bad_filters_are_refused_with_their_code(api, query, code):
    response = api.get(f"/api/runs{query}")
    assert response.status_code == 400 and response.json()["code"] == code


def test_a_stranger_gets_an_empty_list_even_naming_the_project(project, task, charlie):
    run_with_attempts(task)
    stranger = signed_in(charlie)
    for query in ("", f"?project={project.slug}", f"?q={task.title}"):
        assert stranger.get(f"/api/runs{query}").json() == {"items": [], "count": 0, "page": 1, "pages": 1}


def test_a_read_only_token_may_list_runs(task, alice):
    run = run_with_attempts(task)
    _, token = token_create(user=alice, name="reader", read_only=True)
    response = Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200 and response.json()["items"][0]["run_id"] == str(run.pk)


def test_a_page_costs_the_same_queries_at_10_and_300_runs(api, project):
    counts = []
    for size in (10, 300):
        many_runs(factories.TaskFactory(project=project), size)
        with CaptureQueriesContext(connection) as queries:
            assert api.get("/api/runs?page=2&org_node=coder&q=a&min_cost=0.01").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
