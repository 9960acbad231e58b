"""The dashboard as seed 002 reads it: the task's goal with its acceptance criteria and their ids, each
node's goal and its latest attempt under run_info (the output of what is done, the prompt and deadline
of what waits for a report)."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from tests import factories
from tests.clients import signed_in
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


def test_it_lists_the_acceptances_with_ids_and_each_nodes_output_under_run_info(alice, project, scripted_runner,
                                                                               inline_executor):
    task = factories.TaskFactory(project=project, created_by=alice, acceptance_criteria=["Opens in Excel", "Fast"],
                                 acceptance_ids=["ac_excel"])
    scripted_runner.replies[("node", "draft")] = "the draft <script>"
    nodes = [node("draft", title="Draft", goal={"objective": "A draft", "acceptances": [{"id": "d1",
                                                                                          "description": "Short"}]}),
             node("survey", "draft", executor="external", deadline_seconds=600)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain_due()

    data = signed_in(alice).get(f"/api/v1/collaboration/tasks/dashboard?task_id={task.pk}").json()["data"]

    assert data["task"]["goal"]["acceptances"] == [{"id": "ac_excel", "acceptance": "Opens in Excel"},
                                                   {"id": "ac2", "acceptance": "Fast"}]
    draft, survey = data["nodes"]
    assert draft["goal"] == {"objective": "A draft", "acceptances": [{"id": "d1", "description": "Short"}]}
    assert draft["run_info"]["status"] == "succeeded" and draft["run_info"]["output"] == "the draft <script>"
    assert draft["output"] == draft["run_info"]["output"]
    assert survey["run_info"]["executor"] == "external" and survey["run_info"]["waiting_for_report"] is True
    assert survey["run_info"]["deadline_at"] and "Do survey." in survey["run_info"]["instruction"]
    assert survey["loop_task_id"] == f"{task.pk}::survey"
