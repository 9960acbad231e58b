"""A run started while the console runs its limit of runs is queued, first come first served: it waits
in a recorded, visible state — its position and since when — with the budget it was started with, and
nothing of it is ready until it is admitted."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from graphs.engine import run_start
from graphs.errors import InvalidTransitionError
from graphs.models import Task, WorkGraphRun
from graphs.runs.admission import run_queue_position
from tests import factories
from tests.run_builders import edges_for, node, node_rows, planned_run

pytestmark = pytest.mark.django_db


def _manifest() -> dict:
    nodes = [node("build"), node("check", "build")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def _started(project, *, max_cost_usd: Decimal | None = None) -> WorkGraphRun:
    run = planned_run(factories.TaskFactory(project=project), _manifest())
    run_start(run=run, max_cost_usd=max_cost_usd)
    run.refresh_from_db()
    return run


def test_a_run_started_past_the_limit_is_queued_with_its_budget_and_nothing_ready(
    project, inline_executor, settings
):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    first = _started(project)
    second = _started(project, max_cost_usd=Decimal("2.5"))

    assert first.status == "running" and first.queued_at is None
    assert second.status == "queued" and second.queued_at is not None and second.started_at is None
    assert second.max_cost_usd == Decimal("2.5")
    assert not node_rows(second).exists()
    assert Task.objects.get(pk=second.task_id).status == "queued"


def test_queued_runs_keep_their_order_and_say_their_position(project, alice, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    running = _started(project)
    second = _started(project)
    third = _started(project)

    assert [run_queue_position(run) for run in (running, second, third)] == [None, 1, 2]
    client = Client()
    client.force_login(alice)
    page = client.get(f"/runs/{third.pk}/").content.decode()
    assert 'data-status="queued"' in page and "waiting for a run under way to end, since" in page
    # The page says no position or time waited: the runs admitted before it would change them under a live page.
    assert "position" not in page
    in_flight = client.get("/").content.decode().split('id="in-flight"')[1].split("</section>")[0]
    assert f'data-run-id="{third.pk}"' in in_flight and 'data-status="queued"' in in_flight
    assert 'data-action="cancel"' in page and 'data-action="start"' not in page
    answer = client.get(f"/api/runs/{third.pk}").json()
    assert answer["status"] == "queued" and answer["queue_position"] == 2 and answer["queued_at"]


def test_starting_from_the_page_says_the_run_is_queued_and_where(project, alice, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    _started(project)
    run = planned_run(factories.TaskFactory(project=project), _manifest())
    client = Client()
    client.force_login(alice)

    page = client.post(f"/runs/{run.pk}/start/", {"next": f"/runs/{run.pk}/"}, follow=True).content.decode()

    assert "The run is queued, position 1: it starts when a run under way ends." in page


def test_a_run_queued_before_keeps_its_turn_even_when_a_slot_is_free(project, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    _started(project)
    waiting = _started(project)
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 3

    later = _started(project)

    assert later.status == "queued" and run_queue_position(later) == 2 and run_queue_position(waiting) == 1


def test_a_queued_run_cannot_be_started_again(project, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 1
    _started(project)
    queued = _started(project)

    with pytest.raises(InvalidTransitionError):
        run_start(run=queued)


def test_without_a_limit_every_run_starts_at_once(project, inline_executor, settings):
    settings.WORKGRAPH_MAX_ACTIVE_RUNS = 0
    runs = [_started(project) for _ in range(3)]

    assert {run.status for run in runs} == {"running"}
