"""The project pages name every problem of a submission at once — the same fields with the same messages
the projects API names for the same input — and save nothing."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from graphs.models import Project
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

# Five fields wrong at once: the slug, the name, the folder, the budget, and commands without confirmation.
EVERYTHING_WRONG = {"slug": "Bad Slug", "name": "", "target_folder": "relative/folder", "base_ref": "",
                    "agent": "", "max_run_cost_usd": "-1"}


@pytest.fixture
def erin(db):
    return factories.project_creator("erin")


def page_problems(response) -> dict[str, str]:
    """Each field the page marks as wrong, with its message as the page shows it."""
    text = response.content.decode()
    return {name: html.unescape(message)
            for name, message in re.findall(r'<p class="error" id="error-([a-z_]+)">(.*?)</p>', text, re.S)}


def api_problems(response) -> dict[str, str]:
    return {problem["field"]: problem["message"] for problem in response.json()["fields"]}


def test_the_new_project_page_names_all_five_problems_the_api_names(erin):
    client = signed_in(erin)

    page = client.post(reverse("project_new"), EVERYTHING_WRONG | {"allow_commands": "on"})
    api = client.post("/api/projects", data=json.dumps(EVERYTHING_WRONG | {"allow_commands": True}),
                      content_type="application/json")

    assert (page.status_code, api.status_code) == (400, 400)
    assert set(page_problems(page)) == {"slug", "name", "target_folder", "max_run_cost_usd", "allow_commands"}
    assert page_problems(page) == api_problems(api)
    assert not Project.objects.exists()


def test_the_settings_page_names_every_problem_the_api_names(project, alice):
    client = signed_in(alice)
    changes = {"name": "", "target_folder": "/nowhere/at/all", "base_ref": "", "agent": "no-such-runner",
               "max_run_cost_usd": "0", "allow_command_network": "on"}

    page = client.post(reverse("project_edit", args=[project.slug]), changes)
    api = client.patch(f"/api/projects/{project.slug}", content_type="application/json", data=json.dumps(
        changes | {"allow_command_network": True}))

    assert (page.status_code, api.status_code) == (400, 400)
    assert set(page_problems(page)) == {"name", "target_folder", "agent", "max_run_cost_usd",
                                        "allow_command_network"}
    assert page_problems(page) == api_problems(api)
    assert Project.objects.get(pk=project.pk).name == project.name


def test_a_nul_character_is_named_beside_the_other_problems(erin):
    page = signed_in(erin).post(reverse("project_new"), EVERYTHING_WRONG | {"name": "Sh\x00op"})

    problems = page_problems(page)
    assert problems["name"] == "Must not contain NUL characters."
    assert {"slug", "target_folder", "max_run_cost_usd"} <= set(problems)


def test_a_right_submission_still_creates_the_project(erin, repo):
    answer = signed_in(erin).post(reverse("project_new"), EVERYTHING_WRONG | {
        "slug": "shop", "name": "Shop", "target_folder": str(repo), "max_run_cost_usd": "2"})

    assert answer.status_code == 302
    assert Project.objects.get(slug="shop").max_run_cost_usd == 2
