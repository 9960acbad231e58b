"""Normalizing an extracted graph_manifest into the documented shape, with notes for the inspector."""

import copy

import pytest

from graphs.domain.manifest import ManifestError, normalize_graph_manifest, normalize_graph_manifest_with_notes


def test_it_renames_id_to_node_id():
    normalized = normalize_graph_manifest(
        {"nodes": [{"id": "brd", "artifact_type": "brd", "depends_on": []}]}
    )

    assert normalized["nodes"] == [{"node_id": "brd", "artifact_type": "brd", "depends_on": []}]
    assert next(iter(normalized["nodes"][0])) == "node_id"


def test_it_keeps_id_when_the_node_already_has_a_node_id():
    node = {"node_id": "brd", "id": "other", "artifact_type": "brd", "depends_on": []}

    assert normalize_graph_manifest({"nodes": [node], "edges": []})["nodes"] == [node]


def test_it_sets_a_missing_or_null_depends_on_to_an_empty_list():
    manifest = {
        "nodes": [
            {"node_id": "a", "task_prompt": "x"},
            {"node_id": "b", "task_prompt": "y", "depends_on": None},
        ]
    }

    normalized = normalize_graph_manifest(manifest)

    assert [node["depends_on"] for node in normalized["nodes"]] == [[], []]
    assert normalized["edges"] == []


def test_it_back_fills_dependencies_from_data_edges_without_duplicates():
    manifest = {
        "nodes": [
            {"node_id": "a", "task_prompt": "x"},
            {"node_id": "b", "task_prompt": "y"},
            {"node_id": "c", "task_prompt": "z", "depends_on": ["a"]},
        ],
        "edges": [
            {"from": "a", "to": "b", "edge_type": "zero_token"},
            {"from": "a", "to": "c", "edge_type": "needs_judgment"},
            {"from": "b", "to": "c", "edge_type": "needs_judgment"},
        ],
    }

    normalized = normalize_graph_manifest(manifest)

    assert {node["node_id"]: node["depends_on"] for node in normalized["nodes"]} == {
        "a": [],
        "b": ["a"],
        "c": ["a", "b"],
    }


def test_it_does_not_back_fill_from_on_failure_edges():
    manifest = {
        "nodes": [
            {"node_id": "a", "task_prompt": "x"},
            {"node_id": "b", "task_prompt": "y", "depends_on": ["a"], "on_fail": {"action": "loop_back"}},
        ],
        "edges": [{"from": "b", "to": "a", "edge_type": "on_failure"}],
    }

    normalized = normalize_graph_manifest(manifest)

    assert normalized["nodes"][0]["depends_on"] == []


def test_an_edge_without_edge_type_becomes_a_needs_judgment_data_edge():
    manifest = {
        "nodes": [{"node_id": "a", "task_prompt": "x"}, {"node_id": "b", "task_prompt": "y"}],
        "edges": [{"from": "a", "to": "b"}],
    }

    normalized = normalize_graph_manifest(manifest)

    assert normalized["edges"] == [{"from": "a", "to": "b", "edge_type": "needs_judgment"}]
    assert normalized["nodes"][1]["depends_on"] == ["a"]


def test_it_back_fills_edges_from_existing_nodes_in_append_mode():
    manifest = {
        "nodes": [{"node_id": "impl", "task_prompt": "x"}],
        "edges": [
            {"from": "sdd", "to": "impl", "edge_type": "needs_judgment"},
            {"from": "nowhere", "to": "impl", "edge_type": "needs_judgment"},
        ],
    }

    assert normalize_graph_manifest(manifest, existing_node_ids=["sdd"])["nodes"][0]["depends_on"] == ["sdd"]
    assert normalize_graph_manifest(manifest)["nodes"][0]["depends_on"] == []


def test_it_leaves_edges_into_unknown_or_existing_nodes_for_validation():
    manifest = {
        "nodes": [{"node_id": "a", "task_prompt": "x"}],
        "edges": [{"from": "a", "to": "sdd", "edge_type": "zero_token"}, {"from": "a", "to": "a"}],
    }

    normalized = normalize_graph_manifest(manifest, existing_node_ids=["sdd"])

    assert normalized["nodes"] == [{"node_id": "a", "task_prompt": "x", "depends_on": []}]
    assert len(normalized["edges"]) == 2


def test_it_explains_every_change_in_a_note():
    manifest = {
        "nodes": [{"id": "a", "task_prompt": "x"}, {"node_id": "b", "task_prompt": "y", "depends_on": []}],
        "edges": [{"from": "a", "to": "b"}],
    }

    _, notes = normalize_graph_manifest_with_notes(manifest)

    assert notes == [
        "node 'a': key 'id' renamed to 'node_id'",
        "node 'a': missing depends_on set to []",
        "edge 'a' -> 'b': missing edge_type set to 'needs_judgment'",
        "node 'b': dependency on 'a' back-filled from edge",
    ]


def test_a_manifest_already_in_shape_gets_no_notes():
    manifest = {
        "nodes": [{"node_id": "a", "task_prompt": "x", "depends_on": []}],
        "edges": [],
    }

    assert normalize_graph_manifest_with_notes(manifest) == (manifest, [])


def test_it_never_mutates_its_input():
    manifest = {
        "nodes": [
            {"id": "a", "task_prompt": "x", "judgment": {"kind": "none"}},
            {"node_id": "b", "task_prompt": "y"},
        ],
        "edges": [{"from": "a", "to": "b"}],
    }
    before = copy.deepcopy(manifest)

    normalized = normalize_graph_manifest(manifest)
    normalized["nodes"][0]["judgment"]["kind"] = "llm"

    assert manifest == before
    assert normalized["nodes"][1]["depends_on"] == ["a"]


def test_the_plain_variant_returns_the_same_manifest_as_the_one_with_notes():
    manifest = {"nodes": [{"id": "a", "task_prompt": "x"}]}

    assert normalize_graph_manifest(manifest) == normalize_graph_manifest_with_notes(manifest)[0]


def test_it_leaves_malformed_parts_for_validation_to_report():
    assert normalize_graph_manifest({"nodes": "none"}) == {"nodes": "none"}
    assert normalize_graph_manifest(
        {"nodes": ["text", {"node_id": "a", "task_prompt": "x"}], "edges": 3}
    ) == {
        "nodes": ["text", {"node_id": "a", "task_prompt": "x", "depends_on": []}],
        "edges": 3,
    }


def test_it_rejects_a_manifest_that_is_not_an_object():
    with pytest.raises(ManifestError, match="must be a JSON object"):
        normalize_graph_manifest(["not", "a", "manifest"])


def test_it_copies_deeply_nested_node_data_without_recursion_errors():
    payload: list = []
    for _ in range(20_000):
        payload = [payload]
    manifest = {"nodes": [{"node_id": "a", "task_prompt": "x", "extra": payload}], "edges": []}

    normalized = normalize_graph_manifest(manifest)

    assert normalized["nodes"][0]["extra"] is not payload
    assert normalized["nodes"][0]["depends_on"] == []
