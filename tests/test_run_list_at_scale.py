"""The runs list over many runs: ``manage.py seed_runs N`` makes them (each run's cost the sum of its
attempts', as the engine keeps it), every filter's page is read from indexes on PostgreSQL — no scan of
the runs or the attempts, whose work would grow with their number — and a page costs a fixed number
of queries. (The search's plans are test_run_search_index.py's: a table this small is scanned for
a part of a node id, rightly.)"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Count, Sum
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.models import Project, ProjectMembership, WorkGraphRun
from graphs.reads.run_lists import runs_for_user

pytestmark = pytest.mark.django_db
RUNS = 3000


@pytest.fixture
def seeded(alice):
    call_command("seed_runs", str(RUNS), "--project", "many")
    project = Project.objects.get(slug="many")
    ProjectMembership.objects.create(user=alice, project=project, role="lead")
    return project


def test_seed_runs_makes_runs_whose_cost_is_their_attempts(seeded):
    runs = WorkGraphRun.objects.filter(task__project=seeded).annotate(
        attempts=Count("executions"), summed=Sum("executions__cost_usd"))
    assert runs.count() == RUNS
    assert all(run.attempts >= 5 and run.cost_usd == run.summed for run in runs)
    assert runs.filter(status="failed").exists() and runs.filter(status="succeeded").exists()
    # Spread over the past year, not all made in the moment of seeding.
    oldest = runs.order_by("created_at").first().created_at
    assert timezone.now() - oldest > timedelta(days=300)
    # Only the last day's runs are still under way: the reaper ends the runs of workers long dead.
    under_way = runs.exclude(status__in=WorkGraphRun.FINISHED_STATUSES)
    assert not under_way.filter(created_at__lt=timezone.now() - timedelta(days=1)).exists()


FILTERS = {
    "none": {},
    "project": {"project_slug": "many"},
    "status": {"status": "failed"},
    "org node": {"org_node": "validator"},
    "created": {"created_from": (timezone.now() - timedelta(days=7)).date()},
    "min cost": {"min_cost_usd": Decimal("0.5")},
    "all": {"project_slug": "many", "status": "succeeded", "org_node": "validator",
            "created_from": (timezone.now() - timedelta(days=200)).date(), "min_cost_usd": Decimal("0.2")},
}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plans are PostgreSQL's")
def test_each_filters_page_is_read_from_indexes(seeded, alice):
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE graphs_workgraphrun, graphs_worknodeexecution, graphs_task")
    scanned = {}
    for name, filters in FILTERS.items():
        plan = runs_for_user(alice, **filters)[:25].explain()
        if "Index" not in plan or "Seq Scan on graphs_workgraphrun" in plan or "Seq Scan on graphs_worknode" in plan:
            scanned[name] = plan
    assert scanned == {}


def test_a_page_costs_a_fixed_number_of_queries(seeded, alice):
    client = Client()
    client.force_login(alice)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/runs/?status=succeeded&org_node=coder&min_cost=0.01&q=feature_4")
    assert response.status_code == 200
    # The session and its user, the org nodes the filter offers, the count and the page, its progress,
    # spend and matched attempts, and what the page's frame reads.
    assert len(queries) == 13
