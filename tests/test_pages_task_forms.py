"""Creating tasks: the four elements, field-level errors, and the list's filters and pagination."""

from __future__ import annotations

import pytest

from graphs.models import ProjectMembership, Task
from graphs.projects.roles import ACTIONS
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db



def test_a_lead_creates_a_task_with_its_four_elements(project, alice):
    response = signed_in(alice).post(
        "/tasks/new/",
        {
            "project": project.pk, "title": "Export", "goal_text": "Export reports as CSV.",
            "deliverables": "A button\nAn endpoint\n", "acceptance_criteria": "Opens in a spreadsheet",
            "constraints": "", "resources": "reports/views.py", "task_type": "dynamic", "workflow_id": "",
        },
    )
    task = Task.objects.get(title="Export")
    assert response.status_code == 302 and response["Location"] == f"/tasks/{task.pk}/"
    assert task.deliverables == ["A button", "An endpoint"]
    assert task.acceptance_criteria == ["Opens in a spreadsheet"]
    assert task.constraints == []
    assert task.created_by == alice


def test_missing_elements_are_reported_on_their_fields(project, alice):
    response = signed_in(alice).post(
        "/tasks/new/", {"project": project.pk, "title": "", "goal_text": "", "task_type": "workflow"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    for field in ("title", "goal_text", "deliverables", "acceptance_criteria", "workflow_id"):
        assert f'id="error-{field}"' in html, field
    assert "A workflow task needs the id of its workflow." in html
    assert not Task.objects.exists()


def test_the_project_pages_new_task_link_comes_with_its_project_chosen(project, alice, bob):
    other = factories.ProjectFactory()
    factories.member(other, "alice", role="lead")
    page = signed_in(alice).get(f"/projects/{project.slug}/").content.decode()
    form = signed_in(alice).get(f"/tasks/new/?project={project.slug}").content.decode()

    assert f'href="/tasks/new/?project={project.slug}" id="project-new-task"' in page
    assert f'<option value="{project.pk}" selected>' in form
    assert f'<option value="{other.pk}">' in form
    assert 'id="project-new-task"' not in signed_in(bob).get(f"/projects/{project.slug}/").content.decode()


def test_a_reviewer_cannot_create_tasks(project, bob):
    assert signed_in(bob).get("/tasks/new/").status_code == 403


def test_the_projects_offered_for_a_new_task_are_those_the_role_table_lets_the_user_create_tasks_in(
    project, bob, monkeypatch
):
    monkeypatch.setitem(ACTIONS, "create_task", ACTIONS["create_task"] | {ProjectMembership.Role.REVIEWER})

    form = signed_in(bob).get("/tasks/new/")

    assert form.status_code == 200
    assert f'<option value="{project.pk}" selected>{project.name}</option>' in form.content.decode()


def test_a_lead_cannot_create_a_task_in_someone_elses_project(project, alice):
    other = factories.ProjectFactory()
    response = signed_in(alice).post(
        "/tasks/new/",
        {"project": other.pk, "title": "x", "goal_text": "y", "deliverables": "d", "acceptance_criteria": "a",
         "task_type": "dynamic"},
    )
    assert response.status_code == 400
    assert 'id="error-project"' in response.content.decode()


def test_the_task_list_filters_and_paginates(project, alice):
    for index in range(30):
        factories.TaskFactory(project=project, title=f"Report {index}", status="draft" if index % 2 else "failed")
    factories.TaskFactory(title="Invisible elsewhere")
    client = signed_in(alice)
    first = client.get("/tasks/").content.decode()
    assert "Page 1 of 2" in first and "Invisible elsewhere" not in first
    failed = client.get("/tasks/?status=failed").content.decode()
    assert "Page 1 of 1" in failed and "Report 1<" not in failed and "Report 2<" in failed
    assert "Report 17<" in client.get("/tasks/?q=report 17").content.decode()


def test_a_lead_may_choose_gap_driven_planning_and_graph_is_the_default(project, alice):
    client = signed_in(alice)
    fields = {"project": project.pk, "goal_text": "Do it.", "deliverables": "A thing",
              "acceptance_criteria": "It works", "task_type": "dynamic"}
    client.post("/tasks/new/", {**fields, "title": "In rounds", "planning_mode": "gap_driven"})
    client.post("/tasks/new/", {**fields, "title": "At once"})
    modes = dict(Task.objects.filter(project=project).values_list("title", "planning_mode"))
    assert modes == {"In rounds": "gap_driven", "At once": "graph"}
    rounds = Task.objects.get(title="In rounds")
    assert 'id="planning-mode">Planned in rounds' in client.get(f"/tasks/{rounds.pk}/").content.decode()
    page = client.get("/tasks/new/").content.decode()
    assert '<option value="gap_driven">Gap-driven (the planner plans in rounds until no gap is left)</option>' in page


def test_a_task_can_name_an_active_skill_to_guide_its_planning(project, alice):
    active = factories.SkillFactory(skill_id="csv-howto", status="active")
    factories.SkillFactory(skill_id="old-way", status="deprecated")
    fields = {"project": project.pk, "title": "Export", "goal_text": "g", "deliverables": "d",
              "acceptance_criteria": "a", "task_type": "dynamic"}
    client = signed_in(alice)
    assert client.post("/tasks/new/", {**fields, "skill": "old-way"}).status_code == 400
    assert client.post("/tasks/new/", {**fields, "skill": "csv-howto"}).status_code == 302
    assert Task.objects.get(title="Export").skill == active
