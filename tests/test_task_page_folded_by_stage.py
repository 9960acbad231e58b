"""A run of many nodes has its to-do tree folded by stage on its task's page: each stage says how far its
nodes got and links to the stage's own page, which lists them a page at a time; a run of a few nodes
shows every node as before. The failures stay on the task page either way."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.views.runs import STAGE_NODES_PER_PAGE
from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from graphs.reads.todo_tree import FOLD_ABOVE_NODES, task_run_trees
from tests.clients import signed_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db
MANY = FOLD_ABOVE_NODES + 50
ENV_FAILURE = {"category": "EnvFailure", "evidence": ["exit 2"], "confidence": 0.9}
# The task page of a failed run, folded or not: the session, the user, the task and the role, the runs'
# activity, the runs, their planning calls, their node attempts, their spend, branches and DAG specs, the
# artifacts, the task's spend, the navigation's inbox count and the user's permissions (two).
TASK_PAGE_QUERIES = 16


def run_of(task, count: int, *, failed: int = 0):
    """A run of ``count`` independent nodes planned by the planner, each attempted once: all succeeded
    but the first ``failed``."""
    nodes = [node(f"n{index:04d}") for index in range(count)]
    run = planned_run(task, {"nodes": nodes, "edges": []}, status="failed" if failed else "succeeded")
    WorkNodeExecution.objects.bulk_create([
        WorkNodeExecution(run=run, node_id=item["node_id"], subagent_type="planner", attempt=1,
                          status="failed" if index < failed else "succeeded",
                          failure=ENV_FAILURE if index < failed else None)
        for index, item in enumerate(nodes)
    ])
    return run


def test_a_run_of_many_nodes_shows_each_stage_folded_with_its_progress_and_link(task, alice):
    run = run_of(task, MANY, failed=2)
    page = signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()
    assert "data-stage-folded" in page
    assert f"{MANY}/{MANY} done · {MANY - 2} succeeded · 2 failed" in page
    assert f'href="/runs/{run.run_id}/stages/planner/">List its {MANY} nodes</a>' in page
    # No node's row is on the page but the failed ones, under their category.
    assert 'data-node-id="n0100"' not in page
    assert len(re.findall(r'data-node-id="n0001"', page)) == 1


def test_a_run_of_a_few_nodes_lists_every_node(task, alice):
    run_of(task, 5)
    page = signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()
    assert "data-stage-folded" not in page and "List its" not in page
    assert all(f'data-node-id="n{index:04d}"' in page for index in range(5))


def test_the_stage_page_lists_its_nodes_a_page_at_a_time(task, alice):
    run = run_of(task, MANY)
    client = signed_in(alice)
    first = client.get(f"/runs/{run.run_id}/stages/planner/").content.decode()
    assert f"Nodes 1 to {STAGE_NODES_PER_PAGE} of {MANY}" in first
    assert 'data-node-id="n0000"' in first and f'data-node-id="n{STAGE_NODES_PER_PAGE:04d}"' not in first
    second = client.get(f"/runs/{run.run_id}/stages/planner/?page=2").content.decode()
    assert f'data-node-id="n{STAGE_NODES_PER_PAGE:04d}"' in second and f"of {MANY}" in second


def test_the_stage_page_costs_the_same_queries_however_many_nodes(task, alice):
    client = signed_in(alice)
    counts = []
    for count in (10, MANY):
        run = run_of(task, count)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/runs/{run.run_id}/stages/planner/").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_a_stage_no_org_node_planned_and_an_outsider_get_not_found(task, alice, charlie):
    run = run_of(task, 3)
    assert signed_in(alice).get(f"/runs/{run.run_id}/stages/coder/").status_code == 404
    assert signed_in(charlie).get(f"/runs/{run.run_id}/stages/planner/").status_code == 404


def test_a_folded_tree_counts_what_the_whole_tree_shows_without_reading_its_nodes(task):
    """Stages in the run's order (the reviewer's node comes first though listed last), their progress,
    the failures with their roles, and the attempts' causes: the same folded as read whole."""
    nodes = [node(f"n{index:04d}", "review") for index in range(MANY)] + [node("review", subagent_type="reviewer")]
    nodes[2]["depends_on"].append("n0001")
    run = planned_run(task, {"nodes": nodes, "edges": []}, status="failed")
    WorkNodeExecution.objects.create(run=run, node_id=f"{PLANNING_NODE_ID}:coder", subagent_type="coder",
                                     attempt=1, status="failed", failure=ENV_FAILURE)
    attempts = [("review", 1, "succeeded", "initial", None), ("n0000", 1, "failed", "initial", ENV_FAILURE),
                ("n0000", 2, "succeeded", "retry_self", None), ("n0001", 1, "failed", "initial", ENV_FAILURE),
                ("n0002", 1, "blocked", "initial", None), ("n0003", 1, "failed", "initial", ENV_FAILURE),
                ("n0003", 2, "blocked", "loop_back", None), ("n0004", 1, "running", "initial", None)]
    attempts += [(f"n{index:04d}", 1, "succeeded", "initial", None) for index in range(5, MANY - 10)]
    WorkNodeExecution.objects.bulk_create([
        WorkNodeExecution(run=run, node_id=node_id, attempt=attempt, status=status, cause=cause, failure=failure,
                          subagent_type="planner")
        for node_id, attempt, status, cause, failure in attempts
    ])

    def shown(tree):
        return ([(stage.org_node, stage.node_count, stage.progress(), [call.pk for call in stage.planning])
                 for stage in tree.stages], tree.progress, tree.causes,
                [(group.category, [(failed.execution.pk, failed.execution.node_id, failed.execution.attempt,
                                    failed.role) for failed in group.attempts]) for group in tree.failures])

    [folded] = task_run_trees(task)
    [whole] = task_run_trees(task, fold=False)
    assert [stage.org_node for stage in folded.stages] == ["reviewer", "planner", "coder"]
    assert all(not stage.nodes for stage in folded.stages)
    assert sum(len(stage.nodes) for stage in whole.stages) == MANY + 1
    assert shown(folded) == shown(whole)
    assert [failed.role.role if failed.role else None for failed in folded.failures[0].attempts] == [
        None, None, "root_cause", None]


def test_the_task_page_of_a_folded_run_costs_the_same_queries_as_of_a_small_one(task, alice):
    client = signed_in(alice)
    counts = []
    for count in (5, MANY * 3):
        run_of(task, count, failed=2)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/tasks/{task.pk}/").status_code == 200
        counts.append(len(queries))
        WorkGraphRun.objects.filter(task=task).delete()
    assert counts == [TASK_PAGE_QUERIES, TASK_PAGE_QUERIES]
