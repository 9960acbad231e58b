"""Creating a task names every problem of the submission at once — a workflow task without its workflow id and
lists left with blank lines only beside the fields that are missing — and the new task page marks the same
fields as the tasks API names, creating nothing."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from graphs.models import Task
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


def create(client, body: dict):
    return client.post("/api/tasks", data=json.dumps(body), content_type="application/json")


def api_fields(response) -> set[str]:
    assert response.json()["code"] == "validation_error"
    return {problem["field"] for problem in response.json()["fields"]}


def page_fields(response) -> set[str]:
    return set(re.findall(r'<p class="error" id="error-([a-z_]+)">', response.content.decode()))


def test_the_workflow_rule_and_blank_lists_are_named_beside_a_missing_title(alice, project):
    answer = create(signed_in(alice), {"project": project.slug, "title": "", "goal_text": "Ship the export.",
                                       "deliverables": ["  ", ""], "acceptance_criteria": ["It exports."],
                                       "task_type": "workflow"})

    assert answer.status_code == 400
    assert api_fields(answer) == {"title", "deliverables", "workflow_id"}
    assert not Task.objects.exists()


def test_a_workflow_task_that_leaves_out_its_id_is_refused(alice, project):
    answer = create(signed_in(alice), {"project": project.slug, "title": "Export", "goal_text": "Ship it.",
                                       "deliverables": ["export.py"], "acceptance_criteria": ["It exports."],
                                       "task_type": "workflow"})

    assert api_fields(answer) == {"workflow_id"}
    assert "a workflow task needs workflow_id" in answer.json()["fields"][0]["message"]


def test_the_new_task_page_marks_the_fields_the_api_names(alice, project):
    client = signed_in(alice)
    typed = {"title": "", "goal_text": "", "deliverables": " \n ", "acceptance_criteria": "It exports.",
             "task_type": "workflow", "workflow_id": "", "planning_mode": "graph"}

    page = client.post(reverse("task_new"), typed | {"project": project.pk})
    api = create(client, typed | {"project": project.slug, "deliverables": [" ", " "],
                                  "acceptance_criteria": ["It exports."]})

    assert page.status_code == 400
    assert page_fields(page) == api_fields(api) == {"title", "goal_text", "deliverables", "workflow_id"}
    assert not Task.objects.exists()
