"""A team template's problems all come at once, each naming the node it is in: schema errors, bad
references, circles, unknown and high-risk tools, unknown fields and evidence."""

from __future__ import annotations

import json

import pytest

from graphs.models import Skill
from graphs.skills.revisions import skill_save
from graphs.skills.team_templates import team_template_parse
from tests.clients import signed_in


def body_with(template: dict) -> str:
    return "# Research\n\n```team-template\n" + json.dumps(template) + "\n```\n"


def test_a_template_with_every_kind_of_problem_reports_them_all_in_one_pass(settings):
    settings.WORKGRAPH_TOOL_REGISTRY = {"web_fetch": "low", "deploy": "high"}
    template = {
        "version": 2,
        "nodes": [
            {"task": "Collect", "requested_tools": ["web_fecth"]},
            {"node_id": "write", "role": "writer", "depends_on": ["research"], "colour": "red"},
            {"node_id": "check", "task": "Check", "depends_on": ["review"], "requested_tools": ["deploy"],
             "required_evidence": ["photo"], "max_tool_iterations": -1, "constraints": "be brief"},
            {"node_id": "review", "task": "Review", "depends_on": ["check"], "required_for_completion": "yes"},
            {"node_id": "loop", "task": "Loop", "depends_on": ["loop"]},
            "not a node",
        ],
    }
    parsed = team_template_parse(body_with(template))

    assert parsed.template is None
    assert parsed.warnings == [
        'the team template needs "version": 1 (found 2)',
        "template node 1 needs a node_id string",
        "template node 'write' needs a task string",
        "template node 'write' has 'role'; template nodes are generic workers, without roles or agents",
        "template node 'check': constraints must be a list of strings",
        "template node 'check': max_tool_iterations must be a non-negative integer",
        "template node 'review': required_for_completion must be true or false",
        "template node 6 must be a JSON object, not a string",
        "template node 'write' depends on unknown node 'research'",
        "template nodes 'check' → 'review' → 'check' depend on each other in a circle",
        "template node 'loop' depends on itself",
        "template node 1: tool 'web_fecth' is not in the tool registry; planning removes it",
        "template node 'write': field 'colour' is not a template field; planning ignores it",
        "template node 'check': tool 'deploy' is high risk; planning removes it",
        "template node 'check': evidence 'photo' cannot be checked (use tool_result, url, output)",
    ]


def test_an_unknown_tool_is_named_beside_a_schema_error_not_after_it_is_fixed():
    template = {"version": 1, "nodes": [{"node_id": "a", "requested_tools": ["web_fecth"]}]}
    parsed = team_template_parse(body_with(template))
    assert parsed.warnings == [
        "template node 'a' needs a task string",
        "template node 'a': tool 'web_fecth' is not in the tool registry; planning removes it",
    ]


def test_a_chain_without_a_circle_is_no_error():
    template = {"version": 1, "nodes": [
        {"node_id": "a", "task": "A"},
        {"node_id": "b", "task": "B", "depends_on": ["a"]},
        {"node_id": "c", "task": "C", "depends_on": ["a", "b"]},
    ]}
    parsed = team_template_parse(body_with(template))
    assert parsed.template == template and parsed.warnings == []


@pytest.mark.django_db
def test_the_editor_says_whether_the_template_is_used_above_its_problems_or_notes(dana):
    broken = Skill(skill_id="broken", name="Broken", owner_org_node="planner")
    skill_save(skill=broken, body=body_with({"version": 2, "nodes": [{"node_id": "a"}]}), author=dana)
    noted = Skill(skill_id="noted", name="Noted", owner_org_node="planner")
    skill_save(skill=noted, body=body_with({"version": 1, "nodes": [{"node_id": "a", "task": "A", "hue": 1}]}),
               author=dana)
    client = signed_in(dana)

    for url in ("/skills/broken/edit/", "/skills/broken/"):
        assert "2 problems: the team template is not used until they are fixed." in client.get(url).content.decode()
    assert "1 note: planning uses the template and leaves out what it names." in client.get(
        "/skills/noted/edit/").content.decode()
