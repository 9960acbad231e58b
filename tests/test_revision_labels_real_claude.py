"""What the real Claude Code CLI sends the Messages API when a task is planned carries the production revisions:
the planner profile's instructions in its system prompt and the skill's team template in its prompt, where
newer revisions exist that are not labelled production."""

from __future__ import annotations

import json

import pytest

from graphs.models import Skill
from graphs.planning.planner import plan_work_graph
from graphs.profiles.resolve import profile_console
from graphs.profiles.revisions import profile_label_move, profile_save
from graphs.skills.revisions import skill_label_move, skill_save
from tests.standins.anthropic_api import Request, text

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]

PRODUCTION_MARK = "PRODUCTION-PLANNER-5e1d"
NEWEST_MARK = "NEWEST-PLANNER-c07a"


def template_body(node_id: str) -> str:
    template = {"version": 1, "nodes": [{"node_id": node_id, "task": f"Do {node_id}."}]}
    return f"# Research\n\n```team-template\n{json.dumps(template)}\n```\n"


def _system_text(request: Request) -> str:
    system = request.body.get("system", "")
    if isinstance(system, str):
        return system
    return "\n".join(str(block.get("text", "")) for block in system if isinstance(block, dict))


def _plan(request: Request):
    if "## Team template from your skill" not in request.first_user_text:
        return None
    node = {"node_id": "in_production", "task": "Do in_production.", "depends_on": []}
    return text("Adapted.\n```json\n" + json.dumps({"nodes": [node]}) + "\n```")


def test_the_planner_call_carries_the_production_revisions_bodies(real_claude, task, dana):
    planner = profile_console("planner")
    for mark in (PRODUCTION_MARK, NEWEST_MARK):
        planner.instructions = f"You are the planner. {mark}"
        profile_save(profile=planner, author=dana)
    profile_label_move(profile=planner, label="production", number=2, by=dana)
    skill = Skill(skill_id="research", status=Skill.Status.ACTIVE)
    skill_save(skill=skill, body=template_body("in_production"), author=dana)
    skill_save(skill=skill, body=template_body("newest_draft"), author=dana)
    skill_label_move(skill=skill, label="production", number=1, by=dana)
    task.skill = skill
    task.save(update_fields=["skill"])
    real_claude.script = _plan

    result = plan_work_graph("planner", task, task.goal_text)

    asked = [request for request in real_claude.requests if "## Team template" in request.first_user_text]
    assert asked, "the CLI sent no planning prompt"
    system, prompt = _system_text(asked[0]), asked[0].first_user_text
    assert PRODUCTION_MARK in system and NEWEST_MARK not in system
    assert '"node_id": "in_production"' in prompt and "newest_draft" not in prompt
    assert [node["node_id"] for node in result.graph_manifest["nodes"]] == ["in_production"]
    assert result.planning_execution.profile_revision.number == 2
