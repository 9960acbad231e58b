"""Prompt builders: text goes in verbatim, each role sees its own catalog and rules."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from graphs.domain.catalogs import CODER_NODE_CATALOG, PLANNER_ARTIFACT_CATALOG, VALIDATOR_NODE_CATALOG
from graphs.domain.judgments.llm import judge_prompt
from graphs.domain.prompts import (
    TaskBrief,
    agent_identity,
    node_prompt,
    planning_prompt,
    repair_prompt,
)

BRACED_GOAL = 'Render {content} and {} and {0} and {"a": {"b": 1}} literally; keep %s and $name too.'


def _brief(**overrides) -> TaskBrief:
    fields = {
        "title": "CSV export",
        "goal_text": "Let users export reports as CSV.",
        "deliverables": ["an export button"],
        "acceptance_criteria": ["the file opens in a spreadsheet"],
        "constraints": ["no new dependencies"],
        "resources": [{"kind": "url", "value": "https://example.test/spec"}],
    }
    return TaskBrief(**(fields | overrides))


def _catalog_json(catalog) -> str:
    return json.dumps(catalog, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("org_node", ["planner", "coder", "validator", "reviewer"])
def test_a_goal_with_braces_comes_through_verbatim(org_node):
    prompt = planning_prompt(org_node=org_node, brief=_brief(goal_text=BRACED_GOAL, title="{title}"))

    assert BRACED_GOAL in prompt
    assert "Title: {title}" in prompt


def test_every_task_field_is_in_the_prompt():
    prompt = planning_prompt(org_node="planner", brief=_brief())

    for text in (
        "CSV export",
        "- an export button",
        "- AC-1: the file opens in a spreadsheet",
        "- no new dependencies",
        '- {"kind": "url", "value": "https://example.test/spec"}',
    ):
        assert text in prompt


def test_the_brief_is_immutable_and_built_from_a_task():
    task = SimpleNamespace(
        title="t", goal_text="g", deliverables=["d"], acceptance_criteria=[], constraints=["c"], resources=[]
    )

    brief = TaskBrief.from_task(task)

    assert brief == TaskBrief(title="t", goal_text="g", deliverables=("d",), constraints=("c",))
    assert hash(brief)


def test_each_role_gets_its_own_catalog():
    planner = planning_prompt(org_node="planner", brief=_brief())
    coder = planning_prompt(org_node="coder", brief=_brief())
    validator = planning_prompt(org_node="validator", brief=_brief())
    other = planning_prompt(org_node="reviewer", brief=_brief())

    assert _catalog_json(PLANNER_ARTIFACT_CATALOG) in planner
    assert _catalog_json(CODER_NODE_CATALOG) in coder
    assert _catalog_json(VALIDATOR_NODE_CATALOG) in validator
    assert '"artifact_type": "brd"' not in coder + validator + other
    assert '"node_type": "impl"' not in planner + validator + other
    assert '"node_type": "final_verdict"' not in planner + coder + other
    assert "artifact_type: one of the catalog's artifact types" in planner
    for generic in (coder, validator, other):
        assert "task_prompt: the full, self-contained prompt" in generic
        assert "node_type: when a node matches a suggested node type, repeat that node_type" in generic


def test_dynamic_loop_back_is_mentioned_only_to_the_validator():
    assert "dynamic_loop_back" in planning_prompt(org_node="validator", brief=_brief())
    for org_node in ("planner", "coder", "reviewer"):
        assert "dynamic_loop_back" not in planning_prompt(org_node=org_node, brief=_brief())


def test_commands_are_offered_only_in_a_project_that_allows_them():
    allowed = planning_prompt(org_node="validator", brief=_brief(), commands_allowed=True)
    refused = planning_prompt(org_node="validator", brief=_brief())

    assert '"node_type": "run_test_script"' in allowed
    assert "command: instead of task_prompt, a command node's program and arguments" in allowed
    assert '{"kind": "command", "command": [' in allowed
    assert "run_test_script" not in refused and '"kind": "command"' not in refused
    assert "command node" not in refused


@pytest.mark.parametrize("org_node", ["planner", "coder", "validator", "reviewer"])
def test_it_explains_the_manifest_rules_and_asks_for_one_json_object(org_node):
    prompt = planning_prompt(org_node=org_node, brief=_brief())

    for rule in ("zero_token", "needs_judgment", "on_failure", "retry_self", "loop_back", "hard_fail"):
        assert rule in prompt
    assert "check_script_compiles" in prompt
    assert "literal placeholder {content}" in prompt
    assert "ONE JSON object" in prompt
    assert '"nodes": [' in prompt


def test_append_mode_lists_the_existing_node_ids():
    prompt = planning_prompt(org_node="coder", brief=_brief(), existing_node_ids=["brd", "prd", "sdd"])

    assert "- `brd`\n- `prd`\n- `sdd`" in prompt
    assert "every node_id you write must be new" in prompt
    assert "or one of the nodes already in this run" in prompt
    assert "Plan additional nodes" in prompt


def test_fresh_mode_lists_no_existing_nodes():
    prompt = planning_prompt(org_node="coder", brief=_brief())

    assert "Nodes already in this run" not in prompt
    assert "already in this run" not in prompt


def test_a_team_template_is_included_verbatim():
    template = '```team-template\n{"version": 1, "nodes": [{"id": "{x}"}]}\n```'

    prompt = planning_prompt(org_node="coder", brief=_brief(), template_block=template)

    assert template in prompt


def test_the_repair_prompt_carries_the_errors_the_answer_and_the_request():
    prompt = repair_prompt(
        original_prompt="Plan {goal}", raw_response='{"nodes": [}', errors=["no JSON object", "node x: {bad}"]
    )

    assert "- no JSON object\n- node x: {bad}" in prompt
    assert "Plan {goal}" in prompt
    assert '{"nodes": [}' in prompt


def test_the_repair_prompt_clips_a_huge_answer():
    answer = "head" + "x" * 50_000 + "tail"

    prompt = repair_prompt(original_prompt="p", raw_response=answer, errors=["e"])

    assert len(prompt) < 20_000
    assert "head" in prompt
    assert "tail" in prompt


def test_a_catalog_node_prompt_asks_for_its_artifact():
    prompt = node_prompt(node={"node_id": "prd", "artifact_type": "prd"}, brief=_brief(), upstream_outputs={})

    assert "Write the Product requirements document (PRD)" in prompt
    assert "Let users export reports as CSV." in prompt


def test_a_generic_node_prompt_uses_its_task_prompt():
    node = {"node_id": "impl", "task_prompt": 'Add {csv} export; write {"a": 1}.'}

    prompt = node_prompt(node=node, brief=_brief(), upstream_outputs={})

    assert 'Add {csv} export; write {"a": 1}.' in prompt


def test_a_node_prompt_includes_upstream_outputs_and_feedback():
    prompt = node_prompt(
        node={"node_id": "sdd", "artifact_type": "sdd"},
        brief=_brief(),
        upstream_outputs={"brd": "Why: {reasons}", "prd": "Scenario {1}"},
        feedback=["scenario 2 has no pass criterion", "use {format}"],
    )

    assert "### `brd`\n\nWhy: {reasons}" in prompt
    assert "### `prd`\n\nScenario {1}" in prompt
    assert "- scenario 2 has no pass criterion\n- use {format}" in prompt


def test_a_first_attempt_gets_no_feedback_section():
    prompt = node_prompt(node={"node_id": "sdd", "artifact_type": "sdd"}, brief=_brief(), upstream_outputs={})

    assert "Review issues" not in prompt


def test_script_and_verdict_nodes_are_told_their_answer_format():
    script = node_prompt(
        node={"node_id": "s", "node_type": "test_script", "task_prompt": "x"},
        brief=_brief(),
        upstream_outputs={},
    )
    verdict = node_prompt(
        node={"node_id": "v", "node_type": "final_verdict", "task_prompt": "x"},
        brief=_brief(),
        upstream_outputs={},
    )

    assert "Python source of the script only" in script
    assert "`VERDICT: pass`" in verdict
    assert "ROOT_CAUSE" in verdict


def test_a_node_with_neither_shape_is_refused():
    with pytest.raises(ValueError, match="'odd'"):
        node_prompt(node={"node_id": "odd"}, brief=_brief(), upstream_outputs={})


def test_the_judge_prompt_replaces_the_placeholder_with_content_containing_braces():
    content = 'def f():\n    return {"ok": {content}, "x": {}}\n'

    prompt = judge_prompt(judge_prompt_template="Review this:\n\n{content}\n\nBe strict.", content=content)

    assert prompt.startswith("Review this:\n\n" + content + "\n\nBe strict.")
    assert '{"ok": true, "issues": []}' in prompt
    assert '"ok": false' in prompt


def test_the_judge_prompt_appends_content_when_the_template_has_no_placeholder():
    prompt = judge_prompt(judge_prompt_template="Is it good?", content="{body}")

    assert prompt.startswith("Is it good?\n\nThe content to judge:\n\n{body}")


def test_each_org_node_has_an_identity():
    assert "`planner` agent" in agent_identity("planner")
    assert "`reviewer` agent" in agent_identity("reviewer")


def test_a_template_guided_prompt_leaves_out_the_catalog_and_answer_shape_it_replaces():
    guided = planning_prompt(org_node="planner", brief=_brief(), template_block="TEMPLATE RULES HERE")
    plain = planning_prompt(org_node="planner", brief=_brief())
    assert "TEMPLATE RULES HERE" in guided
    assert "## Artifact catalog" in plain and "## Artifact catalog" not in guided
    assert _brief().goal_text in guided
