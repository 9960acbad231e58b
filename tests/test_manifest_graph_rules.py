"""The graph_manifest rules between nodes (loop-backs, ids, edges, cycles, size and depth): accepted when
kept, reported when broken, and every broken rule reported at once."""

from typing import Any

import pytest

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
