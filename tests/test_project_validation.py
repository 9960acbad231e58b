"""A project's fields are each checked with a clear message, its folder and base ref against the disk and
git, and nothing is saved unless every field is right."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from graphs.agents import runner_register
from graphs.models import Project, ProjectMembership
from graphs.projects.edits import ProjectInvalid, project_create, project_update
from graphs.projects.folder_check import NOT_A_REPOSITORY, folder_check
from tests import factories
from tests.repos import git
from tests.scripted_agents import ScriptedRunner

pytestmark = pytest.mark.django_db


def fields(folder: Path | str, **more):
    return {"slug": "shop", "name": "Shop", "target_folder": str(folder), **more}


def problems_of(**kwargs) -> dict[str, str]:
    with pytest.raises(ProjectInvalid) as raised:
        project_create(**kwargs)
    return raised.value.problems


@pytest.fixture
def lead(db):
    return factories.UserFactory(username="alice")


def test_a_repository_folder_is_seen_as_one_with_its_base_ref_resolved_to_a_commit(repo):
    head = git(repo, "rev-parse", "HEAD").strip()

    check = folder_check(folder=str(repo), base_ref="main")

    assert (check.ok, check.exists, check.readable, check.repository, check.commit) == (True, True, True, True, head)
    assert f"from main ({head[:12]})" in check.notes[0]


def test_an_empty_base_ref_names_the_repositorys_head(repo):
    assert folder_check(folder=str(repo)).commit == git(repo, "rev-parse", "HEAD").strip()


def test_a_plain_folder_is_accepted_and_said_to_be_neither_isolated_nor_recorded(tmp_path):
    check = folder_check(folder=str(tmp_path))

    assert (check.ok, check.repository, check.notes) == (True, False, [NOT_A_REPOSITORY])
    assert "neither isolated" in check.notes[0]


def test_a_folder_inside_a_repository_but_not_its_top_is_not_a_repository(repo):
    assert folder_check(folder=str(repo / "src")).repository is False


def test_a_missing_folder_is_refused(tmp_path):
    check = folder_check(folder=str(tmp_path / "nowhere"))

    assert check.problems == {"target_folder": f"There is no folder at {tmp_path / 'nowhere'}."}


def test_a_file_and_a_relative_path_are_refused(repo):
    assert "is a file, not a folder" in folder_check(folder=str(repo / "README.md")).problems["target_folder"]
    assert "absolute path" in folder_check(folder="repo").problems["target_folder"]


def test_an_unknown_ref_is_refused_by_name(repo):
    assert folder_check(folder=str(repo), base_ref="release-9").problems == {
        "base_ref": "release-9 names no commit in this repository."}


def test_a_ref_that_git_would_read_as_an_option_is_refused_before_git_runs(repo):
    assert "not starting with '-'" in folder_check(folder=str(repo), base_ref="--output=/tmp/x").problems["base_ref"]


def test_a_base_ref_on_a_plain_folder_is_refused(tmp_path):
    assert "needs a git repository" in folder_check(folder=str(tmp_path), base_ref="main").problems["base_ref"]


def test_a_repository_without_a_commit_needs_one(tmp_path):
    git(tmp_path, "init", "--quiet")

    assert "no commit yet" in folder_check(folder=str(tmp_path)).problems["base_ref"]


def test_an_unreadable_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("graphs.projects.folder_check.os.access", lambda path, mode: False)

    assert "cannot read" in folder_check(folder=str(tmp_path)).problems["target_folder"]


def test_a_project_is_created_with_its_creator_as_lead(repo, lead):
    saved = project_create(created_by=lead, fields=fields(repo, base_ref="main", max_run_cost_usd="2.5"))

    assert saved.check.repository and saved.project.max_run_cost_usd == Decimal("2.5")
    assert ProjectMembership.objects.get(project=saved.project).role == "lead"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("slug", "Shop Front", "Lowercase letters"),
    ("slug", "-shop", "Lowercase letters"),
    ("name", "   ", "Give the project a name."),
    ("name", "x" * 201, "At most 200 characters (this has 201)."),
    ("slug", "s" * 51, "At most 50 characters"),
    ("name", "Shop\x00", "Must not contain NUL characters."),
    ("target_folder", "/tmp/\x00", "Must not contain NUL characters."),
    ("target_folder", "/tmp/\ud800", "Must be valid text"),
    ("target_folder", "/" + "x" * 1000, "At most 1,000 characters"),
    ("base_ref", "main\x00", "Must not contain NUL characters."),
    ("base_ref", "m" * 201, "At most 200 characters"),
    ("agent", "gpt-9", "Unknown agent runner 'gpt-9'"),
    ("agent", "a\x00", "Must not contain NUL characters."),
    ("max_run_cost_usd", "-1", "more than zero"),
    ("max_run_cost_usd", "0", "more than zero"),
    ("max_run_cost_usd", "lots", "an amount in USD"),
    ("max_run_cost_usd", "0.00001", "at most 4 digits after the point"),
    ("require_plan_approval", "yes", "Must be true or false."),
])
def test_each_bad_field_is_named_with_a_clear_message_and_nothing_is_saved(repo, lead, field, value, message):
    problems = problems_of(created_by=lead, fields=fields(repo, **{field: value}))

    assert message in problems[field]
    assert not Project.objects.exists()


def test_every_problem_is_named_at_once(tmp_path, lead):
    problems = problems_of(created_by=lead, fields={"slug": "Bad Slug", "name": "", "target_folder":
                                                     str(tmp_path / "missing"), "agent": "nope"})

    assert set(problems) == {"slug", "name", "target_folder", "agent"}


def test_a_duplicate_slug_is_refused(repo, lead, project):
    problems = problems_of(created_by=lead, fields=fields(repo, slug=project.slug))

    assert problems == {"slug": f"A project with the slug {project.slug!r} exists already."}


def test_a_runner_that_is_not_set_up_is_refused_with_what_it_lacks(repo, lead, settings):
    settings.WORKGRAPH_OPENAI_BASE_URL = ""

    problems = problems_of(created_by=lead, fields=fields(repo, agent="openai"))

    assert "WORKGRAPH_OPENAI_BASE_URL" in problems["agent"]


def test_a_registered_runner_may_be_chosen(repo, lead):
    runner_register("registered-double", ScriptedRunner)

    assert project_create(created_by=lead, fields=fields(repo, agent="registered-double")).project.agent == (
        "registered-double")


def test_turning_commands_on_needs_the_confirmation_that_says_what_they_let_agents_do(repo, lead):
    problems = problems_of(created_by=lead, fields=fields(repo, allow_commands=True, allow_command_network=True))

    assert set(problems) == {"allow_commands", "allow_command_network"}
    assert "run any program in the project's folder" in problems["allow_commands"]
    confirmed = project_create(created_by=lead, fields=fields(repo, allow_commands=True), confirm_commands=True)
    assert confirmed.project.allow_commands is True


def test_network_without_commands_is_refused(repo, lead):
    problems = problems_of(created_by=lead, fields=fields(repo, allow_command_network=True), confirm_commands=True)

    assert "must be allowed" in problems["allow_command_network"]


def test_an_update_with_one_bad_field_changes_nothing(repo, project):
    before = {field: getattr(project, field) for field in ("name", "target_folder", "base_ref")}

    with pytest.raises(ProjectInvalid) as raised:
        project_update(project=project, changes={"name": "Renamed", "target_folder": str(repo), "base_ref": "nope"})

    assert set(raised.value.problems) == {"base_ref"}
    project.refresh_from_db()
    assert {field: getattr(project, field) for field in before} == before


def test_an_update_keeps_the_slug_and_needs_no_confirmation_for_commands_already_on(repo, project):
    project.allow_commands = True
    project.save(update_fields=["allow_commands"])

    with pytest.raises(ProjectInvalid) as raised:
        project_update(project=project, changes={"slug": "other"})
    assert "cannot change" in raised.value.problems["slug"]
    project_update(project=project, changes={"name": "Renamed", "target_folder": str(repo)})
    project.refresh_from_db()
    assert (project.name, project.allow_commands) == ("Renamed", True)
