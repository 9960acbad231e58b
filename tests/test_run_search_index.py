"""On PostgreSQL the runs list's search by a part of a node id is answered from the attempts' trigram index
(``execution_node_trigram``, migration 0026), never by reading every attempt: the query plan says so."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.reads.run_lists import run_rows, runs_for_user
from tests import factories

pytestmark = [pytest.mark.services, pytest.mark.django_db]

NODE_KINDS = ("brd", "prd", "sdd", "impl_login", "impl_export", "review_backend", "benchmark", "verdict")


@pytest.fixture
def many_attempts(task):
    """2,000 runs of eight nodes each, and one run with an attempt of ``coder_unit``."""
    runs = WorkGraphRun.objects.bulk_create([WorkGraphRun(task=task, status="succeeded") for _ in range(2000)])
    WorkNodeExecution.objects.bulk_create(
        [WorkNodeExecution(run=run, node_id=f"{kind}_{index}", subagent_type="coder", status="succeeded")
         for index, run in enumerate(runs) for kind in NODE_KINDS]
    )
    wanted = factories.RunFactory(task=task, status="failed")
    WorkNodeExecution.objects.create(run=wanted, node_id="coder_unit", subagent_type="coder", status="failed")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE graphs_worknodeexecution")
        cursor.execute("ANALYZE graphs_workgraphrun")
    return wanted


@pytest.mark.parametrize("text", ["coder", "unit", "CODER_U"])
def test_a_part_of_a_node_id_is_found_from_the_trigram_index(alice, many_attempts, text):
    runs = runs_for_user(alice, text=text)

    assert [run.pk for run in runs[:25]] == [many_attempts.pk]
    # At this size the planner may still prefer reading the table, as statistics go; with that path
    # priced out it shows whether the index can answer the search at all, which is what a wrong
    # expression or operator class would break.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = runs[:25].explain()
    assert "execution_node_trigram" in plan, plan
    assert "Seq Scan on graphs_worknodeexecution" not in plan, plan


def test_a_pages_matched_attempts_are_read_by_run_not_from_the_trigram_index(alice, many_attempts):
    runs = list(runs_for_user(alice)[:25])
    with CaptureQueriesContext(connection) as queries:
        rows = run_rows(runs, node_text="UNIT")
    assert [[attempt.node_id for attempt in row.matched] for row in rows if row.matched] == [["coder_unit"]]
    [sql] = [query["sql"] for query in queries.captured_queries if "LOWER(" in query["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}")
        plan = "\n".join(row for (row,) in cursor.fetchall())
    # The page's 25 runs' attempts, not every attempt in the table whose node id holds the text.
    assert "execution_node_trigram" not in plan, plan
