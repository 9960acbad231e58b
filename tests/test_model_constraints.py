"""Invariants that the database itself enforces, whatever code path writes the row."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from graphs.models import ProjectMembership, Task, WorkGraphRun, WorkNodeExecution, planning_node_id
from tests import factories

pytestmark = pytest.mark.django_db


def test_it_refuses_a_second_row_for_the_same_run_node_and_attempt():
    execution = factories.ExecutionFactory(node_id="brd", attempt=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        WorkNodeExecution.objects.create(run=execution.run, node_id="brd", attempt=1, subagent_type="planner")


def test_a_retry_is_a_new_row_next_to_the_first_attempt():
    execution = factories.ExecutionFactory(node_id="brd", attempt=1)
    WorkNodeExecution.objects.create(run=execution.run, node_id="brd", attempt=2, subagent_type="planner")
    assert list(
        WorkNodeExecution.objects.filter(run=execution.run, node_id="brd").values_list("attempt", flat=True)
    ) == [1, 2]


def test_it_refuses_attempt_zero():
    with pytest.raises(IntegrityError), transaction.atomic():
        factories.ExecutionFactory(attempt=0)


def test_a_workflow_task_needs_a_workflow_id(project):
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.create(project=project, title="t", goal_text="g", task_type="workflow", workflow_id="")
    Task.objects.create(project=project, title="t", goal_text="g", task_type="workflow", workflow_id="wf-1")


def test_a_fork_names_the_node_it_was_forked_from():
    parent = factories.RunFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        WorkGraphRun.objects.create(task=parent.task, forked_from=parent, fork_node_id="")
    WorkGraphRun.objects.create(task=parent.task, forked_from=parent, fork_node_id="prd")


def test_one_membership_per_user_and_project(project, alice):
    with pytest.raises(IntegrityError), transaction.atomic():
        ProjectMembership.objects.create(user=alice, project=project, role="viewer")


def test_a_membership_role_must_be_known(project):
    user = factories.UserFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        ProjectMembership.objects.create(user=user, project=project, role="owner")


def test_planning_nodes_are_recognised_by_their_reserved_ids():
    assert planning_node_id() == "__planning__"
    assert planning_node_id("coder") == "__planning__:coder"
    assert factories.ExecutionFactory.build(node_id="__planning__:validator").is_planning
    assert not factories.ExecutionFactory.build(node_id="planning_notes").is_planning


def test_run_is_finished_only_in_terminal_statuses():
    run = factories.RunFactory.build(status=WorkGraphRun.Status.RUNNING)
    assert not run.is_finished()
    run.status = WorkGraphRun.Status.PLANNING_FAILED
    assert run.is_finished()
