"""A skill's team template guides planning: generic workers, checked tools, bounded depth, repair, fallback."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graphs.agents import AgentError, get_runner
from graphs.models import Skill
from graphs.planning.planner import plan_work_graph
from graphs.planning.planning_node import PlanningFailedError
from graphs.skills.revisions import skill_save
from tests import factories

pytestmark = pytest.mark.django_db

TEMPLATE = {
    "version": 1,
    "nodes": [
        {"node_id": "collect", "task": "Collect the official filings", "requested_tools": ["web_fetch"],
         "required_evidence": ["url"]},
        {"node_id": "report", "task": "Write the report", "depends_on": ["collect"]},
    ],
}


def answer(*nodes: dict) -> str:
    return "Adapted the template.\n```json\n" + json.dumps({"nodes": list(nodes)}) + "\n```"


def template_node(node_id: str, *deps: str, **extra) -> dict:
    return {"node_id": node_id, "task": f"Do {node_id}.", "depends_on": list(deps), **extra}


@pytest.fixture
def template_skill(dana) -> Skill:
    skill = Skill(skill_id="finance-research", status=Skill.Status.ACTIVE)
    skill_save(skill=skill, body="# Finance\n\n```team-template\n" + json.dumps(TEMPLATE) + "\n```\n", author=dana)
    return skill


@pytest.fixture
def skilled_task(task, template_skill):
    task.skill = template_skill
    task.save()
    return task


@pytest.fixture
def plan_replies(scripted_runner):
    """Program the planner's answers in order (the first call, then the repair request)."""
    answers: list[str] = []
    scripted_runner.replies[("plan", "planner")] = lambda call: answers.pop(0)
    return answers


def test_the_template_goes_into_the_planner_prompt(skilled_task, plan_replies):
    plan_replies.append(answer(template_node("collect")))
    result = plan_work_graph("planner", skilled_task, skilled_task.goal_text)
    prompt = result.planning_execution.input_payload["prompt"]
    assert "## Team template from your skill" in prompt
    assert '"node_id": "collect"' in prompt
    assert "generic worker" in prompt


def test_template_nodes_become_generic_workers_with_their_contracts(skilled_task, plan_replies, template_skill):
    plan_replies.append(answer(
        template_node("collect", requested_tools=["web_fetch", "read_file"], required_evidence=["url"],
                      output_contract={"format": "list of sources"}, max_tool_iterations=5),
        template_node("report", "collect", required_for_completion=False, constraints=["Cite every figure"]),
    ))
    result = plan_work_graph("planner", skilled_task, skilled_task.goal_text)
    collect, report = result.graph_manifest["nodes"]
    assert collect["node_type"] == report["node_type"] == "generic_worker"
    assert collect["skill_ref"] == "finance-research"
    assert collect["allowed_tools"] == ["web_fetch", "read_file"]
    assert collect["required_evidence"] == ["url"]
    assert collect["task_prompt"].startswith("Do collect.")
    assert "list of sources" in collect["task_prompt"]
    assert "the full http(s) URL of every source" in collect["task_prompt"]
    assert report["depends_on"] == ["collect"]
    assert report["required_for_completion"] is False
    assert "- Cite every figure" in report["task_prompt"]
    planning = result.planning_execution
    assert planning.skill_ref == template_skill
    adaptation = planning.output_payload["adaptation"]
    assert adaptation["template_used"] is True
    assert (adaptation["skill_id"], adaptation["skill_revision"]) == ("finance-research", 1)
    assert adaptation["fallback_reason"] is None and adaptation["repaired"] is False


def test_unknown_and_high_risk_tools_are_removed_with_warnings(skilled_task, plan_replies):
    plan_replies.append(answer(template_node("collect", requested_tools=["web_fetch", "teleport", "deploy"])))
    result = plan_work_graph("planner", skilled_task, skilled_task.goal_text)
    [collect] = result.graph_manifest["nodes"]
    assert collect["allowed_tools"] == ["web_fetch"]
    adaptation = result.planning_execution.output_payload["adaptation"]
    assert adaptation["removed_tools"] == [
        {"node_id": "collect", "tool": "teleport", "reason": "unknown"},
        {"node_id": "collect", "tool": "deploy", "reason": "high_risk"},
    ]
    assert adaptation["warnings"] == [
        "node 'collect': unknown tool removed: teleport",
        "node 'collect': high-risk tool removed: deploy",
    ]


def test_the_tool_registry_comes_from_settings(skilled_task, plan_replies, settings):
    settings.WORKGRAPH_TOOL_REGISTRY = {"teleport": "low", "web_fetch": "high"}
    plan_replies.append(answer(template_node("collect", requested_tools=["web_fetch", "teleport"])))
    [collect] = plan_work_graph("planner", skilled_task, skilled_task.goal_text).graph_manifest["nodes"]
    assert collect["allowed_tools"] == ["teleport"]


def test_a_node_with_a_role_is_rejected_and_the_repaired_answer_is_used(skilled_task, plan_replies, scripted_runner):
    plan_replies.extend([answer(template_node("collect", role="researcher")), answer(template_node("collect"))])
    result = plan_work_graph("planner", skilled_task, skilled_task.goal_text)
    assert [n["node_id"] for n in result.graph_manifest["nodes"]] == ["collect"]
    payload = result.planning_execution.output_payload
    assert "field 'role' is not allowed" in payload["repair_prompt"]
    assert payload["adaptation"]["repaired"] is True
    assert payload["adaptation"]["fallback_reason"] is None
    assert len([call for call in scripted_runner.calls if call[0] == "plan"]) == 2


def test_a_graph_deeper_than_four_is_repaired_once_then_falls_back_to_one_node(skilled_task, plan_replies):
    chain = [template_node("n1")] + [template_node(f"n{i}", f"n{i - 1}") for i in range(2, 6)]
    plan_replies.extend([answer(*chain), answer(*chain)])
    result = plan_work_graph("planner", skilled_task, skilled_task.goal_text)
    assert result.run.status == "ready"
    [single] = result.graph_manifest["nodes"]
    assert (single["node_id"], single["node_type"], single["depends_on"]) == ("complete_task", "generic_worker", [])
    adaptation = result.planning_execution.output_payload["adaptation"]
    assert adaptation["repaired"] is True
    assert "5 nodes deep, over the limit of 4" in adaptation["fallback_reason"]
    assert adaptation["warnings"] == [] and adaptation["removed_tools"] == []


def test_an_answer_without_json_falls_back_after_one_repair(skilled_task, plan_replies):
    plan_replies.extend(["I would rather not.", "Still no."])
    result = plan_work_graph("planner", skilled_task, skilled_task.goal_text)
    assert result.new_node_ids == ["complete_task"]
    assert "no JSON object" in result.planning_execution.output_payload["adaptation"]["fallback_reason"]
    assert result.planning_execution.output_payload["repair_response"] == "Still no."


def test_an_agent_error_still_fails_planning(skilled_task, scripted_runner, settings):
    settings.WORKGRAPH_TRANSIENT_RETRIES = 0
    scripted_runner.replies[("plan", "planner")] = AgentError("no credit", kind="quota")
    with pytest.raises(PlanningFailedError, match="quota"):
        plan_work_graph("planner", skilled_task, skilled_task.goal_text)


def test_a_task_without_a_skill_plans_as_before(task):
    result = plan_work_graph("planner", task, task.goal_text, runner=get_runner("offline"))
    assert "adaptation" not in result.planning_execution.output_payload
    assert "Team template" not in result.planning_execution.input_payload["prompt"]


def test_a_deprecated_skills_template_does_not_guide_planning(skilled_task, template_skill):
    Skill.objects.filter(pk=template_skill.pk).update(status=Skill.Status.DEPRECATED)
    skilled_task.refresh_from_db()
    result = plan_work_graph("planner", skilled_task, skilled_task.goal_text, runner=get_runner("offline"))
    assert "adaptation" not in result.planning_execution.output_payload


def test_an_explicit_skill_guides_an_append_too(task, template_skill, scripted_runner):
    first = plan_work_graph("planner", task, task.goal_text, runner=get_runner("offline"))
    scripted_runner.replies[("plan", "coder")] = answer(template_node("collect"))
    result = plan_work_graph("coder", task, task.goal_text, append_to_run_id=first.run.run_id, skill=template_skill)
    assert result.new_node_ids == ["collect"]
    assert result.planning_execution.output_payload["adaptation"]["skill_id"] == "finance-research"


def test_the_planning_inspector_shows_the_adaptation_report(skilled_task, plan_replies, alice):
    plan_replies.append(answer(template_node("collect", requested_tools=["deploy"])))
    run = plan_work_graph("planner", skilled_task, skilled_task.goal_text).run
    client = Client()
    client.force_login(alice)
    page = client.get(f"/runs/{run.run_id}/planning/").content.decode()
    assert "Team template adaptation" in page
    assert "finance-research" in page
    assert "collect: deploy (high_risk)" in page
    assert "high-risk tool removed: deploy" in page


def test_a_skill_admin_project_member_gets_a_link_to_the_skill(skilled_task, plan_replies, project):
    admin = factories.skill_admin("erin")
    factories.member(project, "erin", role="viewer")
    plan_replies.append(answer(template_node("collect")))
    run = plan_work_graph("planner", skilled_task, skilled_task.goal_text).run
    client = Client()
    client.force_login(admin)
    assert 'href="/skills/finance-research/"' in client.get(f"/runs/{run.run_id}/planning/").content.decode()
