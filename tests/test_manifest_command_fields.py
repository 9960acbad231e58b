"""The manifest rules of command nodes and command judgments: accepted when kept, named when broken."""

from __future__ import annotations

from typing import Any

import pytest

from graphs.domain.manifest import ManifestError, validate_graph_manifest
from graphs.domain.manifest_nodes import manifest_commands


def _manifest(*nodes: dict[str, Any]) -> dict[str, Any]:
    return {"nodes": list(nodes), "edges": []}


def _errors(*nodes: dict[str, Any]) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        validate_graph_manifest(_manifest(*nodes))
    return caught.value.errors


def _command(node_id: str, **fields: Any) -> dict[str, Any]:
    return {"node_id": node_id, "depends_on": [], "command": ["pytest", "-q"], **fields}


def test_it_accepts_a_command_node_without_task_prompt_or_artifact_type():
    validate_graph_manifest(_manifest(
        _command("tests"),
        _command("grep", command=["grep", "-q", "TODO", "README.md"], timeout_seconds=30, expect_exit=1),
    ))


def test_it_accepts_a_command_judgment_on_an_agent_node():
    judgment = {"kind": "command", "command": ["python3", "check.py"], "timeout_seconds": 120}
    validate_graph_manifest(_manifest({"node_id": "impl", "task_prompt": "Build it.", "judgment": judgment}))


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ([], "command must be a non-empty list of strings (the program and its arguments), not []"),
        ("pytest -q", "command must be a non-empty list of strings (the program and its arguments), not 'pytest -q'"),
        (["pytest", ""], "command[1] must be a non-empty string, not ''"),
        (["pytest", 3], "command[1] must be a non-empty string, not 3"),
        (["pytest", "a\x00b"], "command[1] contains a NUL character"),
        (["x" * 4001], "command[0] is 4001 characters, over the limit of 4000"),
        (["echo", *["a"] * 100], "command has 101 arguments, over the limit of 100"),
    ],
)
def test_it_rejects_a_command_that_is_not_a_bounded_argv(command, error):
    assert _errors(_command("tests", command=command)) == [f"node 'tests': {error}"]


@pytest.mark.parametrize("timeout", [0, -5, 1.5, "60", True])
def test_it_rejects_a_timeout_that_is_not_a_positive_number_of_seconds(timeout):
    assert _errors(_command("tests", timeout_seconds=timeout)) == [
        f"node 'tests': timeout_seconds must be a positive integer number of seconds, not {timeout!r}"
    ]


@pytest.mark.parametrize("expect_exit", ["0", 1.0, False])
def test_it_rejects_an_expect_exit_that_is_not_an_exit_code(expect_exit):
    assert _errors(_command("tests", expect_exit=expect_exit)) == [
        f"node 'tests': expect_exit must be an integer exit code, not {expect_exit!r}"
    ]


def test_it_rejects_the_fields_of_an_agent_on_a_command_node():
    errors = _errors(_command("tests", task_prompt="Run the tests.", skill_ref="pytest-skill", max_turns=5))

    assert errors == [
        "node 'tests': a command node runs no agent, so it takes no task_prompt",
        "node 'tests': a command node runs no agent, so it takes no skill_ref",
        "node 'tests': a command node runs no agent, so it takes no max_turns",
    ]


def test_it_rejects_command_fields_on_an_agent_node():
    assert _errors({"node_id": "impl", "task_prompt": "Build it.", "timeout_seconds": 60}) == [
        "node 'impl': timeout_seconds and expect_exit belong to command nodes (nodes with a command)"
    ]


def test_it_rejects_a_command_judgment_without_a_usable_command():
    errors = _errors(
        {"node_id": "a", "task_prompt": "Do a.", "judgment": {"kind": "command"}},
        {"node_id": "b", "task_prompt": "Do b.", "judgment": {"kind": "command", "command": ["make", "check"],
                                                               "timeout_seconds": 0}},
    )

    assert errors == [
        "node 'a': judgment.command must be a non-empty list of strings (the program and its arguments), not None",
        "node 'b': judgment.timeout_seconds must be a positive integer number of seconds, not 0",
    ]


def test_every_command_of_a_manifest_is_listed_in_order():
    manifest = _manifest(
        {"node_id": "impl", "task_prompt": "Build it.",
         "judgment": {"kind": "command", "command": ["make", "lint"], "timeout_seconds": 60}},
        {"node_id": "docs", "task_prompt": "Write the docs."},
        _command("tests", judgment={"kind": "command", "command": ["coverage", "report"]}),
    )

    assert manifest_commands(manifest) == [
        {"node_id": "impl", "runs_as": "judgment", "argv": ["make", "lint"], "timeout_seconds": 60},
        {"node_id": "tests", "runs_as": "node", "argv": ["pytest", "-q"], "timeout_seconds": None},
        {"node_id": "tests", "runs_as": "judgment", "argv": ["coverage", "report"], "timeout_seconds": None},
    ]
