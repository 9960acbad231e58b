"""Agent profiles in the database: the shipped profiles on a fresh install, revisions and their diffs, a
project's override, the profile a call resolves to, and the revision each attempt records."""

from __future__ import annotations

import threading

import pytest

from graphs.agents import AgentResult, OfflineRunner
from graphs.domain.agent_profiles import SHIPPED_PERMISSION_MODE, shipped_profile, tool_names_parse
from graphs.domain.prompts import agent_identity
from graphs.engine import run_start
from graphs.engine.calls import attempt_agent_call
from graphs.models import AgentProfile, AgentProfileRevision
from graphs.planning.planner import plan_work_graph
from graphs.profiles.resolve import (
    profile_console,
    profile_override_create,
    profile_resolve,
    profiles_ensure_shipped,
    profiles_held,
)
from graphs.profiles.revisions import profile_revisions_diff, profile_save
from tests.factories import ExecutionFactory, ProjectFactory, TaskFactory, UserFactory
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db


def test_a_fresh_install_has_the_shipped_profiles_with_todays_identities():
    assert not AgentProfile.objects.exists()

    profiles_ensure_shipped()

    for org_node in ("planner", "coder", "validator"):
        profile = AgentProfile.objects.get(org_node=org_node, project=None)
        revision = profile.revisions.get()
        assert (revision.number, revision.note) == (1, "shipped profile")
        assert profile.instructions == agent_identity(org_node)
        assert profile.permission_mode == SHIPPED_PERMISSION_MODE == "dontAsk"
        assert profile.allowed_tools == list(shipped_profile(org_node).allowed_tools)
    assert "Bash" not in AgentProfile.objects.get(org_node="planner").allowed_tools
    assert {"Write", "Edit", "Bash"} <= set(AgentProfile.objects.get(org_node="coder").allowed_tools)


def test_calling_an_org_node_without_a_profile_creates_its_profile_once():
    first = profile_resolve(org_node="reviewer", project=None)
    second = profile_resolve(org_node="reviewer", project=None)

    assert first == second
    assert first.revision_number == 1 and first.instructions == agent_identity("reviewer")
    assert AgentProfile.objects.filter(org_node="reviewer").count() == 1


def test_a_name_no_profile_can_be_kept_under_runs_with_its_shipped_profile_unstored():
    resolved = profile_resolve(org_node="a role with spaces", project=None)

    assert resolved == shipped_profile("a role with spaces")
    assert resolved.revision_id is None
    assert profile_console("a role with spaces") is None and not AgentProfile.objects.exists()


def test_each_change_is_a_new_revision_and_an_unchanged_save_makes_none():
    author = UserFactory(username="sam")
    profile = profile_console("coder")

    profile.instructions = "You write code.\r\nRun the tests."
    profile.permission_mode = "acceptEdits"
    second = profile_save(profile=profile, author=author, note="stricter")
    unchanged = profile_save(profile=profile, author=author)

    assert (second.number, second.author, second.note) == (2, author, "stricter")
    assert second.instructions == "You write code.\nRun the tests."
    assert unchanged is None
    assert list(profile.revisions.values_list("number", flat=True)) == [1, 2]


def test_the_diff_of_two_revisions_shows_changed_settings_and_instructions():
    profile = profile_console("validator")
    profile.model = "claude-sonnet-4-5"
    profile.allowed_tools = ["Read", "Bash(pytest:*)"]
    profile.instructions = agent_identity("validator") + "\n\nNever edit the deliverable."
    profile_save(profile=profile, author=None)
    old, new = profile.revisions.order_by("number")

    lines = {(line.kind, line.text) for line in profile_revisions_diff(old=old, new=new)}

    assert ("del", "-model: (runner default)") in lines
    assert ("add", "+model: claude-sonnet-4-5") in lines
    assert ("add", "+allowed tools: Read, Bash(pytest:*)") in lines
    assert ("add", "+Never edit the deliverable.") in lines
    assert ("header", "--- revision 1") in lines


def test_a_projects_override_starts_as_a_copy_and_wins_for_that_project_only():
    alpha, beta = ProjectFactory(slug="alpha"), ProjectFactory(slug="beta")
    console = profile_console("coder")
    override = profile_override_create(profile=console, project=alpha, author=None)
    override.model = "claude-opus-4-1"
    override.permission_mode = "acceptEdits"
    profile_save(profile=override, author=None, note="alpha pins its model")

    in_alpha = profile_resolve(org_node="coder", project=alpha)
    in_beta = profile_resolve(org_node="coder", project=beta)

    assert (in_alpha.model, in_alpha.permission_mode) == ("claude-opus-4-1", "acceptEdits")
    assert in_alpha.project_slug == "alpha"
    assert in_alpha.instructions == console.instructions and in_alpha.revision_number == 2
    assert (in_beta.model, in_beta.permission_mode, in_beta.project_slug) == ("", "dontAsk", "")
    assert profile_override_create(profile=console, project=alpha, author=None) == override


def test_an_override_wins_over_a_console_profile_with_more_revisions():
    alpha = ProjectFactory(slug="alpha")
    console = profile_console("coder")
    override = profile_override_create(profile=console, project=alpha, author=None)
    for turns in (5, 6, 7):
        console.max_turns = turns
        profile_save(profile=console, author=None)

    in_alpha = profile_resolve(org_node="coder", project=alpha)

    assert (in_alpha.revision_id, in_alpha.max_turns) == (override.revisions.get().pk, None)
    assert profile_resolve(org_node="coder", project=None).max_turns == 7


def test_a_call_after_an_org_nodes_first_sends_one_statement(django_assert_num_queries):
    alpha = ProjectFactory(slug="alpha")
    profile_override_create(profile=profile_console("coder"), project=alpha, author=None)

    with django_assert_num_queries(1):
        resolved = profile_resolve(org_node="coder", project=alpha)
    with django_assert_num_queries(1):
        profile_resolve(org_node="coder", project=None)

    assert resolved.project_slug == "alpha"


def test_a_call_resolves_to_the_latest_revision():
    profile = profile_console("planner")
    profile.max_turns = 12
    profile.disallowed_tools = ["WebFetch"]
    revision = profile_save(profile=profile, author=None)

    resolved = profile_resolve(org_node="planner", project=None)

    assert (resolved.revision_id, resolved.max_turns, resolved.disallowed_tools) == (revision.pk, 12, ("WebFetch",))


class _Recording:
    name = "recording"

    def __init__(self):
        self.calls = []

    def run(self, call):
        self.calls.append(call)
        return AgentResult(text="done", raw={}, usage=None)


@pytest.mark.django_db(transaction=True)
def test_an_attempt_records_the_profile_revision_its_agent_ran_with(task, scripted_runner, inline_executor):
    # planned_run's nodes belong to the planner: the org node their calls run as.
    profile = profile_console("planner")
    profile.effort = "high"
    revision = profile_save(profile=profile, author=None)
    run = planned_run(task, {"nodes": [node("n0")], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    attempt = run.executions.get(node_id="n0")
    assert attempt.status == "succeeded" and attempt.profile_revision == revision
    assert ("node", "n0", 1) in scripted_runner.calls


def test_a_judge_call_keeps_the_revision_the_attempts_own_call_recorded(tmp_path):
    execution = ExecutionFactory(subagent_type="coder")
    runner = _Recording()
    attempt_agent_call(runner, execution, node={}, prompt="Do it", purpose="node", cancel_event=threading.Event(),
                       cwd=tmp_path)
    first = AgentProfileRevision.objects.get(profile__org_node="coder")
    profile = first.profile
    profile.model = "claude-haiku-4-5"
    profile_save(profile=profile, author=None)

    attempt_agent_call(runner, execution, node={}, prompt="Judge it", purpose="judge", cancel_event=threading.Event(),
                       cwd=tmp_path)

    # The node's own call leaves its revision for the attempt's result to write; a judge call keeps it.
    assert execution.profile_revision_id == first.pk


def test_tool_lists_are_read_one_rule_an_entry_with_commas_inside_parentheses_kept():
    assert tool_names_parse("Read, Bash(git diff:*, git log:*)\nWrite,, Read") == (
        "Read", "Bash(git diff:*, git log:*)", "Write")


def test_a_planning_call_records_the_planners_profile_revision_and_runs_with_it():
    task = TaskFactory()
    runner = _Recording()
    offline = OfflineRunner()

    def run(call):
        runner.calls.append(call)
        return offline.run(call)

    runner.run = run
    result = plan_work_graph("planner", task, task.goal_text, runner=runner)

    revision = AgentProfileRevision.objects.get(profile__org_node="planner", profile__project=None)
    assert result.planning_execution.profile_revision_id == revision.pk
    assert runner.calls[0].profile.revision_id == revision.pk


def test_a_profile_held_by_a_job_is_resolved_once_and_a_new_revision_serves_the_next(django_assert_num_queries):
    profile = profile_console("coder")
    with profiles_held():
        first = profile_resolve(org_node="coder", project=None)
        profile.max_turns = 9
        profile_save(profile=profile, author=None)
        with django_assert_num_queries(0):
            again = profile_resolve(org_node="coder", project=None)
    with profiles_held():
        after = profile_resolve(org_node="coder", project=None)

    assert again == first
    assert (after.max_turns, after.revision_number) == (9, first.revision_number + 1)
