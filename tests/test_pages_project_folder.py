"""The project's folder is a path on the machine the agents run on: only a project lead sees it, on the
project page and in the task page's `git fetch <folder> <branch>` line; others still see the branch."""

from __future__ import annotations

import pytest

from graphs.models import RunWorkspace
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def erin(project):
    """Erin views the project."""
    return factories.member(project, "erin", role="viewer")


@pytest.fixture
def branched(task, project):
    """A run of the task with its branch in the project's folder, as a repository project's runs have."""
    run = factories.RunFactory(task=task)
    return RunWorkspace.objects.create(run=run, repository=project.target_folder, branch="workgraph/run-1234abcd",
                                       base_commit="a" * 40, head_commit="b" * 40)


def test_a_lead_sees_the_fetch_command_naming_the_projects_folder(branched, alice, project):
    page = signed_in(alice).get(f"/tasks/{branched.run.task_id}/").content.decode()

    assert f"git fetch {project.target_folder} workgraph/run-1234abcd\ngit merge FETCH_HEAD" in page


@pytest.mark.parametrize("persona", ["erin", "bob"])
def test_a_viewer_or_reviewer_sees_the_branch_but_not_the_folder(branched, project, persona, request):
    page = signed_in(request.getfixturevalue(persona)).get(f"/tasks/{branched.run.task_id}/").content.decode()

    assert "Branch <code>workgraph/run-1234abcd</code>" in page
    assert project.target_folder not in page
    assert "git fetch" not in page


def test_only_a_lead_sees_the_folder_on_the_project_page(project, alice, erin):
    assert project.target_folder in signed_in(alice).get(f"/projects/{project.slug}/").content.decode()
    assert project.target_folder not in signed_in(erin).get(f"/projects/{project.slug}/").content.decode()
