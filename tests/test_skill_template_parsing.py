"""Finding and checking the team template in a skill body: parsing never fails the skill."""

from __future__ import annotations

import json

from graphs.skills.team_templates import TEMPLATE_EXAMPLE, TEMPLATE_NODE_FIELD_HELP, team_template_parse

TEMPLATE = {
    "version": 1,
    "nodes": [
        {"node_id": "collect", "task": "Collect the sources", "requested_tools": ["web_fetch"],
         "required_evidence": ["url"]},
        {"node_id": "report", "task": "Write the report", "depends_on": ["collect"]},
    ],
}


def body_with(block: str, *, tag: str = "team-template") -> str:
    return f"# Finance research\n\nRead the filings first.\n\n```{tag}\n{block}\n```\n\nThen write.\n"


def test_a_body_without_a_block_has_no_template_and_no_warning():
    parsed = team_template_parse("# Ordinary skill\n\n```json\n{\"version\": 1}\n```\n")
    assert parsed.template is None
    assert parsed.warnings == []


def test_a_valid_block_gives_the_template():
    parsed = team_template_parse(body_with(json.dumps(TEMPLATE)))
    assert parsed.template == TEMPLATE
    assert parsed.warnings == []


def test_the_seed_runtimes_fence_tag_is_read_too():
    parsed = team_template_parse(body_with(json.dumps(TEMPLATE), tag="beaver-team-template"))
    assert parsed.template == TEMPLATE
    assert parsed.warnings == []


def test_one_block_of_each_tag_is_two_blocks():
    body = body_with(json.dumps(TEMPLATE)) + body_with(json.dumps(TEMPLATE), tag="beaver-team-template")
    parsed = team_template_parse(body)
    assert parsed.template is None
    assert parsed.warnings == ["the skill has 2 team-template blocks; a skill may hold one, so none is used"]


def test_invalid_json_gives_no_template_and_says_where_it_broke():
    parsed = team_template_parse(body_with('{"version": 1, "nodes": [}'))
    assert parsed.template is None
    [warning] = parsed.warnings
    assert warning.startswith("the team template is not valid JSON")
    assert "line 1" in warning


def test_several_blocks_give_no_template_and_a_warning():
    body = body_with(json.dumps(TEMPLATE)) + body_with(json.dumps(TEMPLATE))
    parsed = team_template_parse(body)
    assert parsed.template is None
    assert parsed.warnings == ["the skill has 2 team-template blocks; a skill may hold one, so none is used"]


def test_a_json_list_is_the_wrong_shape():
    parsed = team_template_parse(body_with("[1, 2]"))
    assert parsed.template is None
    assert parsed.warnings == ["the team template must be a JSON object, not a list"]


def test_a_wrong_version_and_an_empty_node_list_are_both_reported():
    parsed = team_template_parse(body_with('{"version": 2, "nodes": []}'))
    assert parsed.template is None
    assert parsed.warnings == [
        'the team template needs "version": 1 (found 2)',
        'the team template needs a non-empty "nodes" list',
    ]


def test_nodes_need_an_id_and_a_task_and_no_role():
    template = {"version": 1, "nodes": [{"task": "Collect"}, {"node_id": "write", "role": "writer"}]}
    parsed = team_template_parse(body_with(json.dumps(template)))
    assert parsed.template is None
    assert parsed.warnings == [
        "template node 1 needs a node_id string",
        "template node 'write' needs a task string",
        "template node 'write' has 'role'; template nodes are generic workers, without roles or agents",
    ]


def test_a_dependency_on_an_unknown_node_is_the_wrong_shape():
    template = {"version": 1, "nodes": [{"node_id": "write", "task": "Write", "depends_on": ["research"]}]}
    parsed = team_template_parse(body_with(json.dumps(template)))
    assert parsed.template is None
    assert parsed.warnings == ["template node 'write' depends on unknown node 'research'"]


def test_unknown_and_high_risk_tools_are_flagged_when_the_skill_is_written(settings):
    settings.WORKGRAPH_TOOL_REGISTRY = {"web_fetch": "low", "deploy": "high"}
    tools = ["web_fetch", "web_fecth", "deploy"]
    template = {"version": 1, "nodes": [{"node_id": "a", "task": "A", "requested_tools": tools}]}
    parsed = team_template_parse(body_with(json.dumps(template)))
    assert parsed.template == template
    assert parsed.warnings == [
        "template node 'a': tool 'web_fecth' is not in the tool registry; planning removes it",
        "template node 'a': tool 'deploy' is high risk; planning removes it",
    ]


def test_unknown_fields_and_unsupported_evidence_keep_the_template_with_warnings():
    template = {"version": 1, "nodes": [{"node_id": "a", "task": "A", "colour": "red", "required_evidence": ["photo"]}]}
    parsed = team_template_parse(body_with(json.dumps(template)))
    assert parsed.template == template
    assert parsed.warnings == [
        "template node 'a': field 'colour' is not a template field; planning ignores it",
        "template node 'a': evidence 'photo' cannot be checked (use tool_result, url, output)",
    ]


def test_a_block_inside_a_blockquote_counts_and_one_quoted_in_a_longer_fence_does_not():
    quoted = "> ```team-template\n> " + json.dumps(TEMPLATE) + "\n> ```\n"
    assert team_template_parse(quoted).template == TEMPLATE
    example = "````markdown\n```team-template\n" + json.dumps(TEMPLATE) + "\n```\n````\n"
    assert team_template_parse(example).template is None


def test_json_nested_too_deep_for_the_parser_gives_a_warning_not_an_error():
    parsed = team_template_parse(body_with("[" * 100_000 + "]" * 100_000))
    assert parsed.template is None
    assert parsed.warnings == ["the team template nests deeper than 32 levels"]


def test_json_nested_deeper_than_a_template_needs_is_refused_before_it_is_stored():
    deep = {"version": 1, "nodes": [{"node_id": "a", "task": "t", "input_contract": {}}]}
    inner = deep["nodes"][0]["input_contract"]
    for _ in range(40):
        inner["x"] = {}
        inner = inner["x"]
    parsed = team_template_parse(body_with(json.dumps(deep)))
    assert parsed.template is None
    assert parsed.warnings == ["the team template nests deeper than 32 levels"]


def test_the_editors_example_template_parses_without_a_warning_and_uses_documented_fields():
    parsed = team_template_parse(TEMPLATE_EXAMPLE)
    assert parsed.template is not None and parsed.warnings == []
    assert {name for node in parsed.template["nodes"] for name in node} <= set(TEMPLATE_NODE_FIELD_HELP)
