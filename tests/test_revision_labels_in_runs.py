"""A run of a task uses each skill's and agent profile's production revision, not its newest, read where the
run reads them: a real planning call and real node attempts of the offline agent."""

from __future__ import annotations

import json

import pytest

from graphs.engine import run_start
from graphs.models import PLANNING_NODE_ID, Skill, WorkNodeExecution
from graphs.planning.planner import plan_work_graph
from graphs.profiles.resolve import profile_console
from graphs.profiles.revisions import profile_label_move, profile_save
from graphs.skills.revisions import skill_label_move, skill_save

pytestmark = pytest.mark.django_db

ORG_NODES = ("planner", "coder", "validator", "worker")


def template_body(node_id: str) -> str:
    template = {"version": 1, "nodes": [{"node_id": node_id, "task": f"Do {node_id}."}]}
    return f"# Research\n\n```team-template\n{json.dumps(template)}\n```\n"


@pytest.fixture
def offline(settings):
    settings.WORKGRAPH_AGENT = "offline"


@pytest.fixture
def profiles_in_production(dana) -> dict[str, int]:
    """Every org node's console profile has a newer second revision, but its first is labelled production."""
    ids = {}
    for org_node in ORG_NODES:
        profile = profile_console(org_node)
        ids[org_node] = profile.revisions.get(number=1).pk
        profile.instructions = f"NEWEST {org_node} instructions"
        profile_save(profile=profile, author=dana)
        profile_label_move(profile=profile, label="production", number=1, by=dana)
    return ids


def test_a_planning_call_is_guided_by_the_production_revision_of_the_tasks_skill(
        task, dana, offline, profiles_in_production):
    skill = Skill(skill_id="research", status=Skill.Status.ACTIVE)
    skill_save(skill=skill, body=template_body("in_production"), author=dana)
    skill_save(skill=skill, body=template_body("newest_draft"), author=dana)
    skill_label_move(skill=skill, label="production", number=1, by=dana)
    task.skill = skill
    task.save(update_fields=["skill"])

    planning = plan_work_graph("planner", task, task.goal_text).planning_execution

    prompt = planning.input_payload["prompt"]
    assert '"node_id": "in_production"' in prompt and "newest_draft" not in prompt
    assert planning.output_payload["adaptation"]["skill_revision"] == 1
    assert planning.profile_revision_id == profiles_in_production["planner"]


def test_every_attempt_of_a_run_records_the_production_revision_it_ran_with(
        task, offline, profiles_in_production, inline_executor):
    run = plan_work_graph("planner", task, task.goal_text).run
    run_start(run=run)
    inline_executor.drain()

    attempts = list(WorkNodeExecution.objects.filter(run=run).select_related("profile_revision"))
    worked = [attempt for attempt in attempts if attempt.node_id != PLANNING_NODE_ID]
    assert worked, "the offline plan ran no node"
    assert {attempt.profile_revision_id for attempt in attempts} <= set(profiles_in_production.values())
    assert all("NEWEST" not in attempt.profile_revision.instructions for attempt in attempts)
