"""Every graph_manifest rule : accepted when kept, reported when broken."""

from typing import Any

import pytest

from graphs.domain.catalogs import ARTIFACT_TYPES
from graphs.domain.manifest import ManifestError, validate_graph_manifest


def _node(node_id: str, *deps: str, **fields: Any) -> dict[str, Any]:
    shape = {} if "artifact_type" in fields else {"task_prompt": f"Do the {node_id} step."}
    return {"node_id": node_id, "depends_on": list(deps), **shape, **fields}


def _manifest(*nodes: Any, edges: list[Any] | None = None) -> dict[str, Any]:
    return {"nodes": list(nodes), "edges": edges or []}


def _loop_back(node_id: str, *deps: str) -> dict[str, Any]:
    return _node(
        node_id,
        *deps,
        judgment={"kind": "llm", "judge_prompt": "Judge {content}"},
        on_fail={"action": "loop_back", "max_attempts": 2},
    )


def _on_failure(source: str, target: str) -> dict[str, str]:
    return {"from": source, "to": target, "edge_type": "on_failure"}


def _errors(manifest: Any, existing: dict[str, list[str]] | None = None, **limits: int) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        validate_graph_manifest(manifest, existing, **limits)
    return caught.value.errors


def _one_error(manifest: Any, existing: dict[str, list[str]] | None = None, **limits: int) -> str:
    errors = _errors(manifest, existing, **limits)
    assert len(errors) == 1, errors
    return errors[0]


# --- Structure -------------------------------------------------------------------------------------


def test_it_accepts_catalog_and_generic_nodes_side_by_side():
    validate_graph_manifest(
        _manifest(
            _node("brd", artifact_type="brd"),
            _node("prd", "brd", artifact_type="prd", promotes_to_artifact={"artifact_type": "prd"}),
            _node("impl", "prd", subagent_type="coder", skill_ref="python-dev", node_type="impl"),
            edges=[
                {"from": "brd", "to": "prd", "edge_type": "zero_token"},
                {"from": "prd", "to": "impl", "edge_type": "needs_judgment"},
            ],
        )
    )


def test_it_accepts_a_manifest_without_edges():
    validate_graph_manifest({"nodes": [{"node_id": "a", "task_prompt": "x"}]})


def test_it_rejects_a_manifest_that_is_not_an_object():
    assert _errors(["nodes"]) == ["manifest must be a JSON object"]


def test_it_rejects_nodes_and_edges_that_are_not_lists():
    assert _errors({"nodes": {"a": {}}, "edges": "a->b"}) == [
        "manifest: nodes must be a list",
        "manifest: edges must be a list",
    ]


def test_it_rejects_an_empty_plan():
    assert "nodes is empty" in _one_error(_manifest())


def test_it_rejects_nodes_that_are_not_objects_or_lack_a_node_id():
    errors = _errors(_manifest("brd", _node("ok"), {"task_prompt": "x"}, _node("  ")))

    assert errors == [
        "nodes[0]: must be an object",
        "nodes[2]: node_id must be a non-empty string",
        "nodes[3]: node_id must be a non-empty string",
    ]


def test_it_rejects_depends_on_that_is_not_a_list_of_node_ids():
    errors = _errors(
        _manifest(_node("a"), {**_node("b"), "depends_on": "xyz"}, {**_node("c"), "depends_on": ["a", 3]})
    )

    assert errors == [
        "node 'b': depends_on must be a list of node_id strings",
        "node 'c': depends_on must be a list of node_id strings",
    ]


def test_it_rejects_dependencies_on_unknown_nodes_naming_each():
    errors = _errors(_manifest(_node("a", "ghost"), _node("b", "a", "phantom")))

    assert errors == [
        "node 'a': depends_on names unknown node 'ghost'",
        "node 'b': depends_on names unknown node 'phantom'",
    ]


def test_it_accepts_dependencies_on_existing_nodes_in_append_mode():
    validate_graph_manifest(_manifest(_node("impl", "sdd")), {"sdd": []})


# --- Node shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("artifact_type", ARTIFACT_TYPES)
def test_it_accepts_every_catalog_artifact_type(artifact_type):
    validate_graph_manifest(_manifest(_node("doc", artifact_type=artifact_type)))


def test_it_rejects_nodes_with_both_or_neither_of_artifact_type_and_task_prompt():
    both = _node("both", artifact_type="brd", task_prompt="Write it.")
    neither = {"node_id": "neither", "depends_on": []}

    errors = _errors(_manifest(both, neither))

    assert errors == [
        "node 'both': has both artifact_type and task_prompt; a node takes exactly one",
        "node 'neither': needs artifact_type (a catalog node), task_prompt (a generic node) "
        "or command (a command node)",
    ]


def test_it_rejects_an_unknown_artifact_type_and_an_empty_task_prompt():
    errors = _errors(_manifest(_node("memo", artifact_type="memo"), _node("blank", task_prompt="  ")))

    assert errors[0].startswith("node 'memo': artifact_type 'memo' is not one of brd, prd")
    assert errors[1] == "node 'blank': task_prompt must be a non-empty string"


def test_it_accepts_each_kind_of_judgment():
    validate_graph_manifest(
        _manifest(
            _node("a", judgment={"kind": "none"}),
            _node("b", judgment={"kind": "mechanical", "check_ref": "check_script_compiles"}),
            _node("c", judgment={"kind": "llm", "judge_prompt": "Is this right?\n\n{content}"}),
        )
    )


def test_it_rejects_broken_judgments_naming_each_node():
    errors = _errors(
        _manifest(
            _node("kindless", judgment={}),
            _node("odd", judgment={"kind": "vibes"}),
            _node("blind", judgment={"kind": "llm", "judge_prompt": "Is it good?"}),
            _node("unchecked", judgment={"kind": "mechanical"}),
            _node("flat", judgment="llm"),
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
        _manifest(
            _node("a", on_fail={"action": "retry_self", "max_attempts": 3}),
            _node("b", on_fail={"action": "hard_fail"}),
        )
    )


def test_it_rejects_unknown_on_fail_actions_and_bad_max_attempts():
    errors = _errors(
        _manifest(
            _node("shrug", on_fail={"action": "ignore"}),
            *(
                _node(f"n{i}", on_fail={"action": "retry_self", "max_attempts": bad})
                for i, bad in enumerate([0, -1, "2", True, 1.5])
            ),
            _node("flat", on_fail="retry_self"),
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
    errors = _errors(_manifest(_node("a", promotes_to_artifact="prd", subagent_type="", node_type=3)))

    assert errors == [
        "node 'a': promotes_to_artifact must be an object with a non-empty artifact_type",
        "node 'a': subagent_type must be a non-empty string",
        "node 'a': node_type must be a non-empty string",
    ]


# --- Loop-backs ------------------------------------------------------------------------------------


def test_it_accepts_a_loop_back_to_a_transitive_ancestor():
    validate_graph_manifest(
        _manifest(
            _node("prd"), _node("sdd", "prd"), _loop_back("bench", "sdd"), edges=[_on_failure("bench", "prd")]
        )
    )


def test_it_rejects_loop_back_to_a_non_ancestor():
    manifest = _manifest(
        _node("prd"),
        _node("side"),
        _loop_back("bench", "prd"),
        _node("after", "bench"),
        _loop_back("check", "prd"),
        edges=[_on_failure("bench", "side"), _on_failure("check", "after")],
    )

    assert _errors(manifest) == [
        "node 'bench': loop_back target 'side' is not an upstream dependency of 'bench'",
        "node 'check': loop_back target 'after' is not an upstream dependency of 'check'",
    ]


def test_it_accepts_a_loop_back_to_an_existing_node_in_append_mode():
    manifest = _manifest(
        _loop_back("unit_test", "impl_2"), _node("impl_2", "sdd"), edges=[_on_failure("unit_test", "sdd")]
    )

    validate_graph_manifest(manifest, {"sdd": []})


def test_an_appended_loop_back_may_reach_back_through_the_runs_own_dependencies():
    run = {"prd": [], "sdd": ["prd"], "impl": ["sdd"], "docs": ["prd"]}
    manifest = _manifest(_loop_back("unit_test", "impl"), edges=[_on_failure("unit_test", "prd")])

    validate_graph_manifest(manifest, run)


def test_an_appended_loop_back_to_a_run_node_that_is_not_upstream_is_rejected():
    run = {"prd": [], "sdd": ["prd"], "impl": ["sdd"], "docs": ["prd"]}
    manifest = _manifest(_loop_back("unit_test", "impl"), edges=[_on_failure("unit_test", "docs")])

    assert _one_error(manifest, run) == (
        "node 'unit_test': loop_back target 'docs' is not an upstream dependency of 'unit_test'"
    )


def test_it_rejects_a_loop_back_without_exactly_one_on_failure_edge():
    manifest = _manifest(
        _node("a"),
        _node("b", "a"),
        _loop_back("lonely", "a"),
        _loop_back("greedy", "b"),
        edges=[_on_failure("greedy", "a"), _on_failure("greedy", "b")],
    )

    assert _errors(manifest) == [
        "node 'lonely': on_fail.action is loop_back, which needs exactly one on_failure edge from it; "
        "it has 0",
        "node 'greedy': on_fail.action is loop_back, which needs exactly one on_failure edge from it; "
        "it has 2 (to 'a', 'b')",
    ]


def test_it_rejects_an_on_failure_edge_from_a_node_without_loop_back():
    manifest = _manifest(
        _node("a"), _node("b", "a", on_fail={"action": "retry_self"}), edges=[_on_failure("b", "a")]
    )

    assert _one_error(manifest) == (
        "edge 'b' -> 'a': on_failure edge from node 'b', whose on_fail.action is not loop_back"
    )


def test_it_rejects_an_on_failure_edge_declared_for_an_existing_node():
    manifest = _manifest(_node("new", "old"), edges=[_on_failure("old", "new")])

    assert _one_error(manifest, {"old": []}) == (
        "edge 'old' -> 'new': on_failure edge from 'old', which is not a node of this manifest"
    )


def test_it_accepts_dynamic_loop_back_on_the_validators_final_verdict():
    verdict = _node(
        "verdict",
        node_type="final_verdict",
        subagent_type="validator",
        on_fail={"action": "dynamic_loop_back", "max_attempts": 3},
    )

    validate_graph_manifest(_manifest(verdict))


def test_it_rejects_dynamic_loop_back_anywhere_else():
    manifest = _manifest(
        _node("impl", node_type="impl", on_fail={"action": "dynamic_loop_back"}),
        _node(
            "verdict",
            node_type="final_verdict",
            subagent_type="coder",
            on_fail={"action": "dynamic_loop_back"},
        ),
    )

    assert _errors(manifest) == [
        "node 'impl': dynamic_loop_back is only allowed on a node with node_type 'final_verdict', not 'impl'",
        "node 'verdict': dynamic_loop_back belongs to the validator, not subagent_type 'coder'",
    ]


# --- Node ids ----------------------------------------------------------------------------------------


def test_it_rejects_duplicate_node_ids():
    assert _one_error(_manifest(_node("a"), _node("b"), _node("a"))) == "node 'a': node_id is used by 2 nodes"


def test_it_rejects_node_ids_that_collide_with_existing_ones():
    errors = _errors(_manifest(_node("prd"), _node("sdd"), _node("new")), existing={"prd": [], "sdd": []})

    assert errors == [
        "node 'prd': node_id already exists in the run",
        "node 'sdd': node_id already exists in the run",
    ]


def test_it_rejects_the_reserved_double_underscore_prefix():
    assert _one_error(_manifest(_node("__planning__"))) == (
        "node '__planning__': node_ids starting with '__' are reserved for planning nodes"
    )


# --- Edges ---------------------------------------------------------------------------------------------


def test_it_rejects_malformed_edges():
    errors = _errors(
        _manifest(
            _node("a"),
            _node("b"),
            edges=[
                "a->b",
                {"from": "a"},
                {"from": "a", "to": "b", "edge_type": "maybe"},
            ],
        )
    )

    assert errors == [
        "edges[0]: must be an object",
        "edges[1]: from and to must be non-empty node_id strings",
        "edge 'a' -> 'b': edge_type 'maybe' is not one of zero_token, needs_judgment, on_failure",
    ]


def test_it_rejects_edges_naming_unknown_nodes():
    errors = _errors(
        _manifest(
            _node("a"),
            edges=[
                {"from": "a", "to": "ghost", "edge_type": "zero_token"},
                {"from": "void", "to": "nowhere", "edge_type": "needs_judgment"},
            ],
        )
    )

    assert errors == [
        "edge 'a' -> 'ghost': names unknown node 'ghost'",
        "edge 'void' -> 'nowhere': names unknown node 'void' and 'nowhere'",
    ]


def test_it_rejects_self_loops():
    manifest = _manifest(
        _node("a", "a"),
        _loop_back("b"),
        edges=[{"from": "b", "to": "b", "edge_type": "zero_token"}, _on_failure("b", "b")],
    )

    errors = _errors(manifest)

    assert "node 'a': depends on itself" in errors
    assert errors.count("edge 'b' -> 'b': self-loop (a node cannot feed or loop back to itself)") == 2


def test_it_rejects_appended_data_edges_into_existing_nodes():
    manifest = _manifest(_node("impl"), edges=[{"from": "impl", "to": "sdd", "edge_type": "needs_judgment"}])

    assert _one_error(manifest, {"sdd": []}) == (
        "edge 'impl' -> 'sdd': data edge into existing node 'sdd'; appended nodes cannot add inputs to nodes "
        "already in the run"
    )


# --- Graph shape ---------------------------------------------------------------------------------------


def test_it_rejects_a_cycle_naming_its_nodes():
    manifest = _manifest(_node("a", "c"), _node("b", "a"), _node("c", "b"), _node("downstream", "c"))

    assert (
        _one_error(manifest) == "dependency cycle: 'a' -> 'c' -> 'b' -> 'a' (each node depends on the next)"
    )


def test_it_reports_every_cycle_including_ones_made_by_edges():
    manifest = _manifest(
        _node("a", "b"),
        _node("b"),
        _node("x"),
        _node("y", "x"),
        edges=[
            {"from": "a", "to": "b", "edge_type": "zero_token"},
            {"from": "y", "to": "x", "edge_type": "zero_token"},
        ],
    )

    assert _errors(manifest) == [
        "dependency cycle: 'a' -> 'b' -> 'a' (each node depends on the next)",
        "dependency cycle: 'x' -> 'y' -> 'x' (each node depends on the next)",
    ]


def test_a_loop_back_cycle_through_an_on_failure_edge_is_not_a_dependency_cycle():
    validate_graph_manifest(_manifest(_node("a"), _loop_back("b", "a"), edges=[_on_failure("b", "a")]))


def test_it_bounds_the_number_of_nodes():
    manifest = _manifest(_node("a"), _node("b"), _node("c"))

    validate_graph_manifest(manifest, max_nodes=3)
    assert _one_error(manifest, max_nodes=2) == "manifest: 3 nodes, over the limit of 2"


def test_it_bounds_the_depth_of_the_longest_chain():
    manifest = _manifest(_node("a"), _node("b", "a"), _node("c", "b"), _node("d", "c"), _node("short", "a"))

    validate_graph_manifest(manifest, max_depth=4)
    assert (
        _one_error(manifest, max_depth=3)
        == "dependency chain 'a' -> ... -> 'd' is 4 nodes deep, over the limit of 3"
    )


def test_an_existing_dependency_counts_as_one_level_of_depth():
    manifest = _manifest(_node("impl", "sdd"), _node("test", "impl"))

    validate_graph_manifest(manifest, {"sdd": []}, max_depth=3)
    assert "'sdd' -> ... -> 'test' is 3 nodes deep" in _one_error(manifest, {"sdd": []}, max_depth=2)


def test_it_validates_a_five_thousand_node_chain_without_recursion_errors():
    chain = _manifest(_node("n0"), *(_node(f"n{i}", f"n{i - 1}") for i in range(1, 5_000)))

    validate_graph_manifest(chain, max_nodes=5_000, max_depth=5_000)
    assert "is 5000 nodes deep" in _one_error(chain, max_nodes=5_000, max_depth=4_999)


# --- Reporting -------------------------------------------------------------------------------------------


def test_it_reports_every_problem_at_once():
    manifest = _manifest(
        _node("a", "ghost"),
        _node("a"),
        _node("__x"),
        _loop_back("b", "a"),
        edges=[{"from": "a", "to": "nowhere", "edge_type": "zero_token"}],
    )

    errors = _errors(manifest)

    assert len(errors) == 5
    assert set(errors) == {
        "node 'a': node_id is used by 2 nodes",
        "node '__x': node_ids starting with '__' are reserved for planning nodes",
        "node 'a': depends_on names unknown node 'ghost'",
        "edge 'a' -> 'nowhere': names unknown node 'nowhere'",
        "node 'b': on_fail.action is loop_back, which needs exactly one on_failure edge from it; it has 0",
    }


def test_the_error_is_a_value_error_whose_message_lists_every_problem():
    error = ManifestError(["first problem", "second problem"])

    assert isinstance(error, ValueError)
    assert str(error) == "first problem\nsecond problem"
    assert error.errors == ["first problem", "second problem"]


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
