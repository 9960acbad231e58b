"""A template-guided planner answer's problems come in one repair request: the nodes' own errors and
the graph's (unknown or circular dependencies) together, not one kind after the other is fixed."""

from __future__ import annotations

import json

import pytest

from graphs.planning.template_planning import TemplateGuide, template_answer_adapt

GUIDE = TemplateGuide(skill_pk=1, skill_id="research", skill_revision=1,
                      template={"version": 1, "nodes": [{"node_id": "a", "task": "A"}]})


def answer(*nodes: dict) -> str:
    return "```json\n" + json.dumps({"nodes": list(nodes)}) + "\n```"


@pytest.mark.django_db
def test_node_errors_and_graph_errors_are_reported_together():
    adapted = template_answer_adapt(guide=GUIDE, text=answer(
        {"node_id": "collect", "task": "Collect", "role": "researcher", "depends_on": ["write"]},
        {"node_id": "write", "task": "Write", "depends_on": ["collect"]},
        {"node_id": "check", "task": "Check", "depends_on": ["review"], "max_tool_iterations": -2},
    ))

    assert adapted.manifest is None
    errors = "\n".join(adapted.errors)
    assert "node 'collect': field 'role' is not allowed" in errors
    assert "node 'check': max_tool_iterations must be a non-negative integer" in errors
    assert "review" in errors, "the unknown dependency is named in the same pass"
    assert "cycle" in errors.lower(), "the circle collect ↔ write is named in the same pass"


@pytest.mark.django_db
def test_a_clean_answer_still_becomes_a_manifest():
    adapted = template_answer_adapt(guide=GUIDE, text=answer(
        {"node_id": "collect", "task": "Collect"}, {"node_id": "write", "task": "Write", "depends_on": ["collect"]},
    ))
    assert adapted.errors == []
    assert [node["node_id"] for node in adapted.manifest["nodes"]] == ["collect", "write"]
