"""A graph_manifest's structure and the rules each node keeps: accepted when kept, reported when broken."""


import pytest

from graphs.domain.catalogs import ARTIFACT_TYPES
from graphs.domain.manifest import ManifestError, validate_graph_manifest
from tests import manifests as m

# --- Structure -------------------------------------------------------------------------------------


def test_it_accepts_catalog_and_generic_nodes_side_by_side():
    validate_graph_manifest(
        m.graph(
            m.node("brd", artifact_type="brd"),
            m.node("prd", "brd", artifact_type="prd", promotes_to_artifact={"artifact_type": "prd"}),
            m.node("impl", "prd", subagent_type="coder", skill_ref="python-dev", node_type="impl"),
            edges=[
                {"from": "brd", "to": "prd", "edge_type": "zero_token"},
                {"from": "prd", "to": "impl", "edge_type": "needs_judgment"},
            ],
        )
    )


def test_it_accepts_a_manifest_without_edges():
    validate_graph_manifest({"nodes": [{"node_id": "a", "task_prompt": "x"}]})


def test_it_rejects_a_manifest_that_is_not_an_object():
    assert m.errors(["nodes"]) == ["manifest must be a JSON object"]


def test_it_rejects_nodes_and_edges_that_are_not_lists():
    assert m.errors({"nodes": {"a": {}}, "edges": "a->b"}) == [
        "manifest: nodes must be a list",
        "manifest: edges must be a list",
    ]


def test_it_rejects_an_empty_plan():
    assert "nodes is empty" in m.one_error(m.graph())


def test_it_rejects_nodes_that_are_not_objects_or_lack_a_node_id():
    errors = m.errors(m.graph("brd", m.node("ok"), {"task_prompt": "x"}, m.node("  ")))

    assert errors == [
        "nodes[0]: must be an object",
        "nodes[2]: node_id must be a non-empty string",
        "nodes[3]: node_id must be a non-empty string",
    ]


def test_it_rejects_depends_on_that_is_not_a_list_of_node_ids():
    errors = m.errors(
        m.graph(m.node("a"), {**m.node("b"), "depends_on": "xyz"}, {**m.node("c"), "depends_on": ["a", 3]})
    )

    assert errors == [
        "node 'b': depends_on must be a list of node_id strings",
        "node 'c': depends_on must be a list of node_id strings",
    ]


def test_it_rejects_dependencies_on_unknown_nodes_naming_each():
    errors = m.errors(m.graph(m.node("a", "ghost"), m.node("b", "a", "phantom")))

    assert errors == [
        "node 'a': depends_on names unknown node 'ghost'",
        "node 'b': depends_on names unknown node 'phantom'",
    ]


def test_it_accepts_dependencies_on_existing_nodes_in_append_mode():
    validate_graph_manifest(m.graph(m.node("impl", "sdd")), {"sdd": []})


# --- Node shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("artifact_type", ARTIFACT_TYPES)
def test_it_accepts_every_catalog_artifact_type(artifact_type):
    validate_graph_manifest(m.graph(m.node("doc", artifact_type=artifact_type)))


def test_it_rejects_nodes_with_both_or_neither_of_artifact_type_and_task_prompt():
    both = m.node("both", artifact_type="brd", task_prompt="Write it.")
    neither = {"node_id": "neither", "depends_on": []}

    errors = m.errors(m.graph(both, neither))

    assert errors == [
        "node 'both': has both artifact_type and task_prompt; a node takes exactly one",
        "node 'neither': needs artifact_type (a catalog node), task_prompt (a generic node) "
        "or command (a command node)",
    ]


def test_it_rejects_an_unknown_artifact_type_and_an_empty_task_prompt():
    errors = m.errors(m.graph(m.node("memo", artifact_type="memo"), m.node("blank", task_prompt="  ")))

    assert errors[0].startswith("node 'memo': artifact_type 'memo' is not one of brd, prd")
    assert errors[1] == "node 'blank': task_prompt must be a non-empty string"


def test_it_accepts_each_kind_of_judgment():
    validate_graph_manifest(
        m.graph(
            m.node("a", judgment={"kind": "none"}),
            m.node("b", judgment={"kind": "mechanical", "check_ref": "check_script_compiles"}),
            m.node("c", judgment={"kind": "llm", "judge_prompt": "Is this right?\n\n{content}"}),
        )
    )


def test_it_rejects_broken_judgments_naming_each_node():
    errors = m.errors(
        m.graph(
            m.node("kindless", judgment={}),
            m.node("odd", judgment={"kind": "vibes"}),
            m.node("blind", judgment={"kind": "llm", "judge_prompt": "Is it good?"}),
            m.node("unchecked", judgment={"kind": "mechanical"}),
            m.node("flat", judgment="llm"),
        )
    )

    assert errors == [
        "node 'kindless': judgment.kind None is not one of none, mechanical, llm, command",
        "node 'odd': judgment.kind 'vibes' is not one of none, mechanical, llm, command",
        "node 'blind': an llm judgment needs a judge_prompt containing the {content} placeholder",
        "node 'unchecked': a mechanical judgment needs check_ref naming the check",
        "node 'flat': judgment must be an object",
    ]


def test_it_accepts_on_fail_actions_with_positive_max_attempts():
    validate_graph_manifest(
        m.graph(
            m.node("a", on_fail={"action": "retry_self", "max_attempts": 3}),
            m.node("b", on_fail={"action": "hard_fail"}),
        )
    )


def test_it_rejects_unknown_on_fail_actions_and_bad_max_attempts():
    errors = m.errors(
        m.graph(
            m.node("shrug", on_fail={"action": "ignore"}),
            *(
                m.node(f"n{i}", on_fail={"action": "retry_self", "max_attempts": bad})
                for i, bad in enumerate([0, -1, "2", True, 1.5])
            ),
            m.node("flat", on_fail="retry_self"),
        )
    )

    assert errors[0] == (
        "node 'shrug': on_fail.action 'ignore' is not one of "
        "retry_self, loop_back, hard_fail, dynamic_loop_back"
    )
    assert errors[1:6] == [
        f"node 'n{i}': on_fail.max_attempts must be a positive integer, not {bad!r}"
        for i, bad in enumerate([0, -1, "2", True, 1.5])
    ]
    assert errors[6] == "node 'flat': on_fail must be an object"


def test_it_rejects_optional_fields_of_the_wrong_type():
    errors = m.errors(m.graph(m.node("a", promotes_to_artifact="prd", subagent_type="", node_type=3)))

    assert errors == [
        "node 'a': promotes_to_artifact must be an object with a non-empty artifact_type",
        "node 'a': subagent_type must be a non-empty string",
        "node 'a': node_type must be a non-empty string",
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("write_set", "src/**", "node 'n': write_set must be a list of path globs"),
        ("forbidden_paths", ["ok/**", ""], "node 'n': forbidden_paths must be a list of path globs"),
        ("max_turns", 0, "node 'n': max_turns must be a positive integer, not 0"),
        ("max_turns", True, "node 'n': max_turns must be a positive integer, not True"),
    ],
)
def test_a_nodes_write_set_forbidden_paths_and_turn_bound_are_checked(field, value, message):
    manifest = {"nodes": [{"node_id": "n", "task_prompt": "Do it.", field: value}], "edges": []}

    with pytest.raises(ManifestError) as caught:
        validate_graph_manifest(manifest)

    assert any(message in error for error in caught.value.errors)


# --- Reporting -------------------------------------------------------------------------------------------


def test_the_error_is_a_value_error_whose_message_lists_every_problem():
    error = ManifestError(["first problem", "second problem"])

    assert isinstance(error, ValueError)
    assert str(error) == "first problem\nsecond problem"
    assert error.errors == ["first problem", "second problem"]
