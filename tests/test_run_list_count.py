"""The runs list's count is bounded: it counts the runs only so far past the page shown
(``graphs.reads.paging.BoundedPaginator``), says "more than" past that, and pages on as before, so a
filter matching tens of thousands of runs costs what a page costs."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.models import Project, ProjectMembership, WorkGraphRun, WorkNodeExecution
from graphs.reads.paging import BoundedPaginator
from graphs.reads.run_lists import runs_for_user
from graphs.runs.facts import LATEST_RUN_FIRST
from tests import factories
from tests.clients import signed_in
from tests.run_builders import many_runs

pytestmark = pytest.mark.django_db
AHEAD = 50


@pytest.fixture
def client(alice, monkeypatch):
    # Counted 50 runs past the page's first, two pages of 25: a few runs go past it.
    monkeypatch.setattr("console.views.pages.RUNS_COUNTED_AHEAD", AHEAD)
    return signed_in(alice)


def _said(client, query: str = "") -> tuple[str, str, dict[str, str]]:
    """What the list says of its count, its pager's words, and the pages its links lead to by their words."""
    html = client.get(f"/runs/{query}").content.decode()
    count = re.search(r'id="run-count"[^>]*>([^<]*)<', html).group(1)
    pager = re.search(r'id="run-pager".*?</nav>', html, re.S).group(0)
    words = re.search(r'<span class="muted">([^<]*)</span>', pager).group(1)
    links = {text: page for page, text in re.findall(r'href="\?[^"]*page=(\d+)">([^<]*)</a>', pager)}
    return count, words, links


def test_a_list_within_the_count_is_counted_exactly_and_offers_its_oldest_page(client, task):
    many_runs(task, AHEAD)
    assert _said(client) == ("50 runs", "Page 1 of 2", {"Older →": "2", "Oldest page": "2"})


def test_a_list_past_the_count_says_more_than_and_offers_no_oldest_page(client, task):
    many_runs(task, 120)
    assert _said(client) == ("More than 50 runs", "Page 1 of more than 2", {"Older →": "2"})


def test_each_page_counts_as_far_past_itself_so_the_next_is_always_there(client, task):
    many_runs(task, 120)
    assert _said(client, "?page=2") == ("More than 75 runs", "Page 2 of more than 3",
                                        {"← Newer": "1", "Older →": "3"})
    assert _said(client, "?page=3") == ("More than 100 runs", "Page 3 of more than 4",
                                        {"← Newer": "2", "Older →": "4"})
    # From page 4 on, the count reaches the end: the last page is known again.
    assert _said(client, "?page=4") == ("120 runs", "Page 4 of 5",
                                        {"← Newer": "3", "Older →": "5", "Oldest page": "5"})
    assert _said(client, "?page=5") == ("120 runs", "Page 5 of 5", {"← Newer": "4"})


def test_a_page_past_the_end_or_no_number_shows_the_last_or_the_first(client, task):
    many_runs(task, AHEAD)
    assert _said(client, "?page=999999999999999999999999") == ("50 runs", "Page 2 of 2", {"← Newer": "1"})
    assert _said(client, "?page=first")[1] == "Page 1 of 2"


def test_the_filters_apply_to_the_count(client, task):
    many_runs(task, 120)
    WorkGraphRun.objects.filter(pk__in=WorkGraphRun.objects.values("pk")[:30]).update(status="failed")
    assert _said(client, "?status=failed")[0] == "30 runs"


def test_the_count_reads_its_rows_by_key_unordered_and_stops_past_the_page(alice, task):
    many_runs(task, 120)
    with CaptureQueriesContext(connection) as queries:
        page = BoundedPaginator(runs_for_user(alice), 25, ahead=AHEAD).get_page("3")
    assert (page.paginator.count, page.paginator.capped, page.paginator.count_floor) == (101, True, 100)
    [count] = [query["sql"] for query in queries.captured_queries if "COUNT(" in query["sql"]]
    assert "LIMIT 101" in count and "ORDER BY" not in count and "manifest" not in count


def test_a_capped_page_costs_the_queries_an_exact_one_does(client, project, task):
    many_runs(task, 40)
    with CaptureQueriesContext(connection) as exact:
        assert client.get("/runs/?org_node=coder").status_code == 200
    many_runs(factories.TaskFactory(project=project), 100)
    with CaptureQueriesContext(connection) as capped:
        assert "More than 50 runs" in client.get("/runs/?org_node=coder").content.decode()
    assert len(capped) == len(exact)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plans are PostgreSQL's")
def test_the_count_of_a_filter_matching_every_run_stops_after_the_ones_it_counts(alice):
    call_command("seed_runs", "3000", "--project", "many")
    ProjectMembership.objects.create(user=alice, project=Project.objects.get(slug="many"), role="lead")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE graphs_workgraphrun, graphs_worknodeexecution, graphs_task")
    with CaptureQueriesContext(connection) as queries:
        BoundedPaginator(runs_for_user(alice, org_node="validator"), 25, ahead=AHEAD).get_page(1)
    [sql] = [query["sql"] for query in queries.captured_queries]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        [plan] = cursor.fetchone()[0]
    aggregate = plan["Plan"]
    [limit] = aggregate["Plans"]
    # Every seeded run has a validator's attempt: the count reads 51 of the 3,000, not all of them.
    assert (aggregate["Node Type"], limit["Node Type"], limit["Actual Rows"]) == ("Aggregate", "Limit", AHEAD + 1)


def _shown(client, query: str) -> list[str]:
    """The runs the list shows, by id, in its order."""
    return re.findall(r'<tr data-run-id="([^"]+)"', client.get(f"/runs/{query}").content.decode())


def _searched_runs(task, count: int, node_id: str) -> list[str]:
    """``count`` runs of ``task`` with an attempt of ``node_id`` among theirs, newest first, by id."""
    many_runs(task, count)
    runs = list(WorkGraphRun.objects.filter(task=task).order_by(*LATEST_RUN_FIRST))
    WorkNodeExecution.objects.bulk_create([WorkNodeExecution(run=run, node_id=node_id, subagent_type="coder",
                                                             status="succeeded") for run in runs])
    return [str(run.pk) for run in runs]


def test_a_search_counted_to_its_end_reads_its_matches_once_and_its_page_by_key(client, project, task):
    newest = _searched_runs(task, 40, "coder_unit")
    many_runs(factories.TaskFactory(project=project), 30)
    with CaptureQueriesContext(connection) as queries:
        assert _shown(client, "?q=UNIT&page=2") == newest[25:]
    searched = [query["sql"] for query in queries.captured_queries if "%UNIT%" in query["sql"]]
    # The count finds the matching runs and keeps the page's keys; the page's runs are read by them.
    assert len(searched) == (1 if connection.vendor == "postgresql" else 2)
    assert _said(client, "?q=UNIT")[0] == "40 runs"


def test_a_search_past_the_count_shows_its_newest_runs_found_run_by_run(client, alice, task):
    newest = _searched_runs(task, 120, "coder_unit")
    assert _shown(client, "?q=coder_u") == newest[:25]
    assert _shown(client, "?q=coder_u&page=3") == newest[50:75]
    assert _said(client, "?q=coder_u")[0] == "More than 50 runs"
    assert _shown(client, "?q=coder_u") == [str(run.pk) for run in runs_for_user(alice, text="coder_u")[:25]]
