"""A manifest node's ``retry_policy`` and ``tool_profile`` are checked like every other field."""

from __future__ import annotations

import pytest

from graphs.domain.manifest import ManifestError, validate_graph_manifest


def _errors(**fields) -> list[str]:
    try:
        validate_graph_manifest({"nodes": [{"node_id": "a", "task_prompt": "Do a.", **fields}], "edges": []})
    except ManifestError as error:
        return error.errors
    return []


def test_a_complete_retry_policy_and_a_tool_profile_are_accepted():
    assert _errors(retry_policy={"max_retries": 2, "delays_seconds": [2, 4.5], "kinds": ["network"]},
                   tool_profile="read") == []


@pytest.mark.parametrize(
    ("policy", "complaint"),
    [
        ("often", "retry_policy must be an object"),
        ({}, "max_retries must be an integer from 0 to 10"),
        ({"max_retries": 11}, "max_retries must be an integer from 0 to 10"),
        ({"max_retries": True}, "max_retries must be an integer"),
        ({"max_retries": 1, "delays_seconds": []}, "delays_seconds must be a list of 1 to 10 numbers"),
        ({"max_retries": 1, "delays_seconds": [-1]}, "delays_seconds must be a list"),
        ({"max_retries": 1, "delays_seconds": [7200]}, "delays_seconds must be a list"),
        ({"max_retries": 1, "kinds": ["quota"]}, "kinds must be a non-empty list of timeout, network"),
        ({"max_retries": 1, "backoff": "exponential"}, "unknown field 'backoff'"),
    ],
)
def test_a_bad_retry_policy_is_named(policy, complaint):
    [error] = _errors(retry_policy=policy)
    assert error.startswith("node 'a': retry_policy")
    assert complaint in error


def test_an_unknown_tool_profile_is_named():
    assert _errors(tool_profile="admin") == ["node 'a': tool_profile 'admin' is not one of read, write"]
