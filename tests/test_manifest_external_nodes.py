"""The manifest rules of external nodes (``executor: external``): accepted when kept, named when broken."""

from __future__ import annotations

from typing import Any

import pytest

from graphs.domain.manifest import ManifestError, validate_graph_manifest
from graphs.domain.manifest_nodes import is_external_node


def _node(**fields: Any) -> dict[str, Any]:
    return {"node_id": "survey", "depends_on": [], "task_prompt": "Interview three users.", **fields}


def _errors(node: dict[str, Any]) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        validate_graph_manifest({"nodes": [node], "edges": []})
    return caught.value.errors


def test_it_accepts_an_external_node_with_a_deadline_and_a_mechanical_judgment():
    node = _node(executor="external", deadline_seconds=86_400,
                 judgment={"kind": "mechanical", "check_ref": "output_not_empty"})
    validate_graph_manifest({"nodes": [node], "edges": []})
    assert is_external_node(node)
    assert not is_external_node(_node(executor="agent"))


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"executor": "robot"}, "node 'survey': executor 'robot' is not one of agent, external"),
        ({"deadline_seconds": 60}, "node 'survey': deadline_seconds belongs to external nodes (executor: external)"),
        ({"executor": "external", "deadline_seconds": 0},
         "node 'survey': deadline_seconds must be a positive integer number of seconds, not 0"),
        ({"executor": "external", "deadline_seconds": "1h"},
         "node 'survey': deadline_seconds must be a positive integer number of seconds, not '1h'"),
        ({"executor": "external", "max_turns": 5}, "node 'survey': an external node runs no agent, so it takes no"
                                                   " max_turns"),
        ({"executor": "external", "judgment": {"kind": "llm", "judge_prompt": "Judge {content}"}},
         "node 'survey': an external node's report is judged as it arrives, so its judgment.kind must be one of"
         " none, mechanical, not 'llm'"),
        ({"executor": "external", "judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"}},
         "node 'survey': an external node's report cannot carry the verdict it is judged by; a verdict gate"
         " (verdict_says_pass) reads an agent's verdict, so it is never external"),
    ],
)
def test_it_names_each_broken_rule(fields, error):
    assert error in _errors(_node(**fields))


def test_an_external_node_runs_no_command():
    node = {"node_id": "survey", "executor": "external", "command": ["true"]}
    assert "node 'survey': an external node runs no command; drop command or executor" in _errors(node)
