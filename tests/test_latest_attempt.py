"""A node's latest attempt is its highest-numbered row, read alike for one node and for many."""

from __future__ import annotations

import pytest

from graphs.runs.facts import latest_attempts, latest_by_node, node_latest_attempt
from tests import factories
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


def test_a_node_s_latest_attempt_is_its_highest_numbered_row_whatever_the_order_rows_were_made_in(task):
    run = planned_run(task, {"nodes": [node("a"), node("b")], "edges": []}, status="running")
    second = factories.ExecutionFactory(run=run, node_id="a", attempt=2, status="running")
    factories.ExecutionFactory(run=run, node_id="a", attempt=1, status="failed")
    only = factories.ExecutionFactory(run=run, node_id="b", attempt=1, status="succeeded")

    assert node_latest_attempt(run=run, node_id="a") == second
    assert latest_by_node(run.executions.filter(node_id__in=["a", "b"])) == {"a": second, "b": only}
    assert set(latest_attempts(run.executions.all())) == {second, only}


def test_a_node_with_no_attempt_yet_has_no_latest_attempt(task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")

    assert node_latest_attempt(run=run, node_id="a") is None


def test_the_latest_attempt_carries_its_run_without_reading_it_again(task, django_assert_num_queries):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    factories.ExecutionFactory(run=run, node_id="a", attempt=1, status="running")

    with django_assert_num_queries(1):
        assert node_latest_attempt(run=run, node_id="a").run.pk == run.pk
