"""The runs list at /runs/: every run the user may see across tasks, filtered, searched and paged, in a
number of queries that does not grow with the number of runs."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from graphs.models import WorkNodeExecution
from tests import factories
from tests.clients import signed_in
from tests.run_builders import many_runs, run_with_attempts

pytestmark = pytest.mark.django_db


def _listed(client, query: str = "") -> list[str]:
    """The run ids the list shows, in order."""
    html = client.get(f"/runs/{query}").content.decode()
    return re.findall(r'<tr data-run-id="([0-9a-f-]+)"', html)


@pytest.fixture
def client(alice):
    return signed_in(alice)


def test_it_lists_every_run_of_the_users_projects_newest_first_across_tasks(client, project, alice):
    now = timezone.now()
    first, second = factories.TaskFactory(project=project), factories.TaskFactory(project=project)
    old = run_with_attempts(first, created=now - timedelta(days=2))
    new = run_with_attempts(second, created=now - timedelta(hours=1))
    middle = run_with_attempts(first, created=now - timedelta(days=1))
    run_with_attempts(factories.TaskFactory(), created=now)  # another project's run: alice is no member of it
    assert _listed(client) == [str(new.pk), str(middle.pk), str(old.pk)]


def test_the_top_nav_links_the_runs_list(client):
    assert '<a href="/runs/">Runs</a>' in client.get("/").content.decode()


def test_a_stranger_sees_no_run_and_naming_the_project_changes_nothing(project, task, charlie):
    run_with_attempts(task)
    stranger = signed_in(charlie)
    assert _listed(stranger) == []
    assert _listed(stranger, f"?project={project.slug}") == []
    assert task.title not in stranger.get("/runs/").content.decode()


def test_anonymous_visitors_are_sent_to_sign_in():
    response = Client().get("/runs/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_it_filters_by_project(client, project, alice):
    other = factories.ProjectFactory()
    factories.member(other, "alice", role="viewer")
    mine = run_with_attempts(factories.TaskFactory(project=project))
    theirs = run_with_attempts(factories.TaskFactory(project=other))
    assert _listed(client, f"?project={other.slug}") == [str(theirs.pk)]
    assert _listed(client, f"?project={project.slug}") == [str(mine.pk)]


def test_it_filters_by_status(client, task):
    failed = run_with_attempts(task, status="failed")
    run_with_attempts(task, status="succeeded")
    assert _listed(client, "?status=failed") == [str(failed.pk)]


def test_the_org_node_filter_finds_the_runs_that_org_node_worked_in(client, task):
    planned_only = run_with_attempts(task, nodes=["brd"], org_node="planner")
    coded = run_with_attempts(task, nodes=["impl"], org_node="coder")
    factories.ExecutionFactory(run=coded, node_id="__planning__", subagent_type="planner", status="succeeded")
    assert _listed(client, "?org_node=coder") == [str(coded.pk)]
    assert set(_listed(client, "?org_node=planner")) == {str(planned_only.pk), str(coded.pk)}


def test_the_date_filter_takes_whole_days_both_included(client, task):
    day = datetime(2026, 11, 20, tzinfo=timezone.get_current_timezone())
    before = run_with_attempts(task, created=day - timedelta(seconds=1))
    morning = run_with_attempts(task, created=day)
    evening = run_with_attempts(task, created=day + timedelta(days=1, hours=23, minutes=59))
    after = run_with_attempts(task, created=day + timedelta(days=2))
    assert _listed(client, "?created_from=2026-11-20&created_to=2026-11-21") == [str(evening.pk), str(morning.pk)]
    assert _listed(client, "?created_from=2026-11-22") == [str(after.pk)]
    assert _listed(client, "?created_to=2026-11-19") == [str(before.pk)]


def test_the_cost_filter_sums_every_attempt_of_therun_with_attempts(client, task):
    summed = run_with_attempts(task, nodes=["a", "b"], costs=[Decimal("0.03"), Decimal("0.04")])
    run_with_attempts(task, nodes=["a"], costs=[Decimal("0.02")])
    run_with_attempts(task, nodes=["a"])  # no call reported a cost
    assert _listed(client, "?min_cost=0.05") == [str(summed.pk)]
    assert len(_listed(client, "?min_cost=0")) == 2


def test_search_matches_the_task_title_in_any_case(client, project):
    export = run_with_attempts(factories.TaskFactory(project=project, title="Add CSV export"))
    run_with_attempts(factories.TaskFactory(project=project, title="Fix the login page"))
    assert _listed(client, "?q=csv+EXPORT") == [str(export.pk)]


def test_search_matches_a_part_of_a_node_id_the_run_has_attempted_in_any_case(client, task):
    coder = run_with_attempts(task, nodes=["coder_unit", "review"])
    unit = run_with_attempts(task, nodes=["unit_test"])
    run_with_attempts(task, nodes=["impl_logout"])
    assert _listed(client, "?q=coder") == [str(coder.pk)]
    assert _listed(client, "?q=unit") == [str(unit.pk), str(coder.pk)]
    assert _listed(client, "?q=Coder_U") == [str(coder.pk)]
    assert _listed(client, "?q=der_un") == [str(coder.pk)]
    # A planned node that never ran is not found: the search reads attempts, not manifests.
    coder.graph_manifest["nodes"].append({"node_id": "planned_only", "depends_on": []})
    coder.save(update_fields=["graph_manifest"])
    assert _listed(client, "?q=planned_only") == []


def test_a_search_lists_the_attempts_it_matched_each_to_pick_for_a_compare(client, task):
    run = run_with_attempts(task, nodes=["coder_unit", "review"])
    attempt = WorkNodeExecution.objects.get(run=run, node_id="coder_unit")
    html = client.get("/runs/?q=unit").content.decode()
    assert f'data-pick="attempt" value="{attempt.pk}"' in html and 'data-node-id="coder_unit"' in html
    assert f'href="/executions/{attempt.pk}/">coder_unit #1</a>' in html
    assert 'data-pick="attempt" value="' not in client.get("/runs/").content.decode()


def test_the_org_node_filter_offers_the_org_nodes_of_the_viewers_runs(client, task, charlie):
    run_with_attempts(task, nodes=["impl"], org_node="coder")
    run_with_attempts(task, nodes=["brd"], org_node="planner")
    run_with_attempts(factories.TaskFactory(), nodes=["x"], org_node="someone_elses")
    html = client.get("/runs/").content.decode()
    select = html[html.index('<select name="org_node"'):]
    select = select[: select.index("</select>")]
    assert re.findall(r'<option value="([^"]*)"', select) == ["", "coder", "planner"]
    assert "Select a valid choice" in client.get("/runs/?org_node=someone_elses").content.decode()


def test_each_run_can_be_picked_to_compare_and_the_bar_knows_the_compare_pages(client, task):
    run = run_with_attempts(task, nodes=["a"])
    html = client.get("/runs/").content.decode()
    assert f'data-pick="run" value="{run.pk}" data-task-id="{task.pk}"' in html
    placeholders = "00000000-0000-0000-0000-00000000000a/compare/00000000-0000-0000-0000-00000000000b"
    assert f'data-runs-url="/runs/{placeholders}/"' in html
    assert 'src="/static/js/runs-list.js"' in html


def test_filters_combine_and_the_pager_keeps_them(client, task):
    for _ in range(30):
        run_with_attempts(task, status="failed", nodes=["impl"], org_node="coder")
    run_with_attempts(task, status="succeeded", nodes=["impl"], org_node="coder")
    html = client.get("/runs/?status=failed&org_node=coder&q=impl").content.decode()
    assert "30 runs" in html
    assert 'href="?status=failed&amp;org_node=coder&amp;q=impl&page=2"' in html
    assert len(_listed(client, "?status=failed&org_node=coder&q=impl&page=2")) == 5


def test_a_filter_that_does_not_clean_is_left_out_and_says_why(client, task):
    run = run_with_attempts(task, status="failed")
    response = client.get("/runs/?min_cost=lots&status=failed")
    assert response.status_code == 200
    assert "Enter a number." in response.content.decode()
    assert _listed(client, "?min_cost=lots&status=failed") == [str(run.pk)]


def test_it_shows_25_runs_a_page(client, task):
    runs = [run_with_attempts(task, created=timezone.now() - timedelta(minutes=minute)) for minute in range(27)]
    assert _listed(client) == [str(run.pk) for run in runs[:25]]
    assert _listed(client, "?page=2") == [str(run.pk) for run in runs[25:]]


def test_each_row_shows_its_task_status_progress_times_cost_and_links(client, task):
    started = timezone.now() - timedelta(minutes=10)
    run = run_with_attempts(task, status="failed", nodes=["a", "b"], costs=[Decimal("0.0125"), Decimal("0.01")],
               started_at=started, finished_at=started + timedelta(minutes=3, seconds=5))
    WorkNodeExecution.objects.filter(run=run, node_id="b").update(status="failed")
    html = client.get("/runs/").content.decode()
    row = html[html.index(f'<tr data-run-id="{run.pk}"'):]
    row = row[: row.index("</tr>")]
    assert f'<a href="/tasks/{task.pk}/">{task.title}</a>' in row
    assert 'data-status="failed">failed</span>' in row
    assert "2/2 done · 1 succeeded · 1 failed" in row
    assert started.strftime("%Y-%m-%d %H:%M") in row
    assert "3 min 05 s" in row
    assert "$0.0225" in row
    assert f'href="/runs/{run.pk}/"' in row and f'href="/runs/{run.pk}/planning/"' in row


def test_a_running_run_shows_its_duration_so_far_and_a_planning_one_when_it_was_created(client, task):
    run_with_attempts(task, status="running", started_at=timezone.now() - timedelta(seconds=42))
    run_with_attempts(task, status="planning")
    html = client.get("/runs/").content.decode()
    assert "so far" in html
    assert "not started · created" in html


def test_task_titles_and_searched_text_are_escaped(client, project):
    run_with_attempts(factories.TaskFactory(project=project, title="<script>alert(1)</script>"))
    html = client.get("/runs/?q=%3Cscript%3E").content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize("query", ["", "?page=2", "?status=succeeded&org_node=coder&q=a&min_cost=0.01"
                                   "&created_from=2000-01-01&created_to=2999-12-31"])
def test_a_page_costs_the_same_queries_at_10_and_300_runs(client, project, query):
    counts = []
    for size in (10, 300):
        many_runs(factories.TaskFactory(project=project), size)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/runs/{query}")
        assert response.status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
