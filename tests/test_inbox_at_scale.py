"""What every page's frame reads stays small over a long history: the navigation's inbox count and the
list pages' live fingerprint find the few runs and attempts waiting or under way from partial indexes
(``run_awaiting_approval``, ``run_budget_stopped``, ``execution_waiting_report``, ``run_under_way``),
never reading every run of the viewer's projects, whose number grows with the history."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.models import Project, ProjectMembership
from graphs.reads.inbox import inbox_count
from graphs.reads.live import runs_fingerprint_read
from tests.test_inbox import budget_stopped, change_waiting, plan_waiting, report_waiting

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the plans are PostgreSQL's"),
]
RUNS = 3000


@pytest.fixture
def history(alice, task):
    """A long history of runs in alice's project, and one item of each kind waiting on her."""
    call_command("seed_runs", str(RUNS), "--project", "history")
    ProjectMembership.objects.create(user=alice, project=Project.objects.get(slug="history"), role="lead")
    for waiting in (plan_waiting, report_waiting, change_waiting, budget_stopped):
        waiting(task, minutes=5)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def plans_of(read) -> list[str]:
    """The plan PostgreSQL chose for each query ``read`` made."""
    with CaptureQueriesContext(connection) as queries:
        read()
    plans = []
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            cursor.execute(f"EXPLAIN {query['sql']}")
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


def test_the_inbox_count_finds_each_kind_from_its_index(history, alice):
    assert inbox_count(alice) == 4
    [plan] = plans_of(lambda: inbox_count(alice))
    for index in ("run_awaiting_approval", "run_budget_stopped", "execution_waiting_report"):
        assert index in plan
    assert "Seq Scan on graphs_workgraphrun" not in plan and "Seq Scan on graphs_worknodeexecution" not in plan


def test_the_live_fingerprint_reads_the_runs_under_way_alone(history, alice):
    [plan] = plans_of(lambda: runs_fingerprint_read(user=alice))
    assert "run_under_way" in plan
    assert "Seq Scan on graphs_workgraphrun" not in plan and "Seq Scan on graphs_worknodeexecution" not in plan
