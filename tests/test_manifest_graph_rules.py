"""The graph_manifest rules between nodes (loop-backs, ids, edges, cycles, size and depth): accepted when
kept, reported when broken, and every broken rule reported at once."""

from typing import Any

from graphs.domain.manifest import validate_graph_manifest
from tests import manifests as m


def _loop_back(node_id: str, *deps: str) -> dict[str, Any]:
    return m.node(
        node_id,
        *deps,
        judgment={"kind": "llm", "judge_prompt": "Judge {content}"},
        on_fail={"action": "loop_back", "max_attempts": 2},
    )


def _on_failure(source: str, target: str) -> dict[str, str]:
    return {"from": source, "to": target, "edge_type": "on_failure"}




# --- Loop-backs ------------------------------------------------------------------------------------


def test_it_accepts_a_loop_back_to_a_transitive_ancestor():
    validate_graph_manifest(
        m.graph(
            m.node("prd"), m.node("sdd", "prd"), _loop_back("bench", "sdd"), edges=[_on_failure("bench", "prd")]
        )
    )


def test_it_rejects_loop_back_to_a_non_ancestor():
    manifest = m.graph(
        m.node("prd"),
        m.node("side"),
        _loop_back("bench", "prd"),
        m.node("after", "bench"),
        _loop_back("check", "prd"),
        edges=[_on_failure("bench", "side"), _on_failure("check", "after")],
    )

    assert m.errors(manifest) == [
        "node 'bench': loop_back target 'side' is not an upstream dependency of 'bench'",
        "node 'check': loop_back target 'after' is not an upstream dependency of 'check'",
    ]


def test_it_accepts_a_loop_back_to_an_existing_node_in_append_mode():
    manifest = m.graph(
        _loop_back("unit_test", "impl_2"), m.node("impl_2", "sdd"), edges=[_on_failure("unit_test", "sdd")]
    )

    validate_graph_manifest(manifest, {"sdd": []})


def test_an_appended_loop_back_may_reach_back_through_the_runs_own_dependencies():
    run = {"prd": [], "sdd": ["prd"], "impl": ["sdd"], "docs": ["prd"]}
    manifest = m.graph(_loop_back("unit_test", "impl"), edges=[_on_failure("unit_test", "prd")])

    validate_graph_manifest(manifest, run)


def test_an_appended_loop_back_to_a_run_node_that_is_not_upstream_is_rejected():
    run = {"prd": [], "sdd": ["prd"], "impl": ["sdd"], "docs": ["prd"]}
    manifest = m.graph(_loop_back("unit_test", "impl"), edges=[_on_failure("unit_test", "docs")])

    assert m.one_error(manifest, run) == (
        "node 'unit_test': loop_back target 'docs' is not an upstream dependency of 'unit_test'"
    )


def test_it_rejects_a_loop_back_without_exactly_one_on_failure_edge():
    manifest = m.graph(
        m.node("a"),
        m.node("b", "a"),
        _loop_back("lonely", "a"),
        _loop_back("greedy", "b"),
        edges=[_on_failure("greedy", "a"), _on_failure("greedy", "b")],
    )

    assert m.errors(manifest) == [
        "node 'lonely': on_fail.action is loop_back, which needs exactly one on_failure edge from it; "
        "it has 0",
        "node 'greedy': on_fail.action is loop_back, which needs exactly one on_failure edge from it; "
        "it has 2 (to 'a', 'b')",
    ]


def test_it_rejects_an_on_failure_edge_from_a_node_without_loop_back():
    manifest = m.graph(
        m.node("a"), m.node("b", "a", on_fail={"action": "retry_self"}), edges=[_on_failure("b", "a")]
    )

    assert m.one_error(manifest) == (
        "edge 'b' -> 'a': on_failure edge from node 'b', whose on_fail.action is not loop_back"
    )


def test_it_rejects_an_on_failure_edge_declared_for_an_existing_node():
    manifest = m.graph(m.node("new", "old"), edges=[_on_failure("old", "new")])

    assert m.one_error(manifest, {"old": []}) == (
        "edge 'old' -> 'new': on_failure edge from 'old', which is not a node of this manifest"
    )


def test_it_accepts_dynamic_loop_back_on_the_validators_final_verdict():
    verdict = m.node(
        "verdict",
        node_type="final_verdict",
        subagent_type="validator",
        on_fail={"action": "dynamic_loop_back", "max_attempts": 3},
    )

    validate_graph_manifest(m.graph(verdict))


def test_it_rejects_dynamic_loop_back_anywhere_else():
    manifest = m.graph(
        m.node("impl", node_type="impl", on_fail={"action": "dynamic_loop_back"}),
        m.node(
            "verdict",
            node_type="final_verdict",
            subagent_type="coder",
            on_fail={"action": "dynamic_loop_back"},
        ),
    )

    assert m.errors(manifest) == [
        "node 'impl': dynamic_loop_back is only allowed on a node with node_type 'final_verdict', not 'impl'",
        "node 'verdict': dynamic_loop_back belongs to the validator, not subagent_type 'coder'",
    ]


# --- Node ids ----------------------------------------------------------------------------------------


def test_it_rejects_duplicate_node_ids():
    assert m.one_error(m.graph(m.node("a"), m.node("b"), m.node("a"))) == "node 'a': node_id is used by 2 nodes"


def test_it_rejects_node_ids_that_collide_with_existing_ones():
    errors = m.errors(m.graph(m.node("prd"), m.node("sdd"), m.node("new")), existing={"prd": [], "sdd": []})

    assert errors == [
        "node 'prd': node_id already exists in the run",
        "node 'sdd': node_id already exists in the run",
    ]


def test_it_rejects_the_reserved_double_underscore_prefix():
    assert m.one_error(m.graph(m.node("__planning__"))) == (
        "node '__planning__': node_ids starting with '__' are reserved for planning nodes"
    )


# --- Edges ---------------------------------------------------------------------------------------------


def test_it_rejects_malformed_edges():
    errors = m.errors(
        m.graph(
            m.node("a"),
            m.node("b"),
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
    errors = m.errors(
        m.graph(
            m.node("a"),
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
    manifest = m.graph(
        m.node("a", "a"),
        _loop_back("b"),
        edges=[{"from": "b", "to": "b", "edge_type": "zero_token"}, _on_failure("b", "b")],
    )

    errors = m.errors(manifest)

    assert "node 'a': depends on itself" in errors
    assert errors.count("edge 'b' -> 'b': self-loop (a node cannot feed or loop back to itself)") == 2


def test_it_rejects_appended_data_edges_into_existing_nodes():
    manifest = m.graph(m.node("impl"), edges=[{"from": "impl", "to": "sdd", "edge_type": "needs_judgment"}])

    assert m.one_error(manifest, {"sdd": []}) == (
        "edge 'impl' -> 'sdd': data edge into existing node 'sdd'; appended nodes cannot add inputs to nodes "
        "already in the run"
    )


# --- Graph shape ---------------------------------------------------------------------------------------


def test_it_rejects_a_cycle_naming_its_nodes():
    manifest = m.graph(m.node("a", "c"), m.node("b", "a"), m.node("c", "b"), m.node("downstream", "c"))

    assert (
        m.one_error(manifest) == "dependency cycle: 'a' -> 'c' -> 'b' -> 'a' (each node depends on the next)"
    )


def test_it_reports_every_cycle_including_ones_made_by_edges():
    manifest = m.graph(
        m.node("a", "b"),
        m.node("b"),
        m.node("x"),
        m.node("y", "x"),
        edges=[
            {"from": "a", "to": "b", "edge_type": "zero_token"},
            {"from": "y", "to": "x", "edge_type": "zero_token"},
        ],
    )

    assert m.errors(manifest) == [
        "dependency cycle: 'a' -> 'b' -> 'a' (each node depends on the next)",
        "dependency cycle: 'x' -> 'y' -> 'x' (each node depends on the next)",
    ]


def test_a_loop_back_cycle_through_an_on_failure_edge_is_not_a_dependency_cycle():
    validate_graph_manifest(m.graph(m.node("a"), _loop_back("b", "a"), edges=[_on_failure("b", "a")]))


def test_it_bounds_the_number_of_nodes():
    manifest = m.graph(m.node("a"), m.node("b"), m.node("c"))

    validate_graph_manifest(manifest, max_nodes=3)
    assert m.one_error(manifest, max_nodes=2) == "manifest: 3 nodes, over the limit of 2"


def test_it_bounds_the_depth_of_the_longest_chain():
    manifest = m.graph(m.node("a"), m.node("b", "a"), m.node("c", "b"), m.node("d", "c"), m.node("short", "a"))

    validate_graph_manifest(manifest, max_depth=4)
    assert (
        m.one_error(manifest, max_depth=3)
        == "dependency chain 'a' -> ... -> 'd' is 4 nodes deep, over the limit of 3"
    )


def test_an_existing_dependency_counts_as_one_level_of_depth():
    manifest = m.graph(m.node("impl", "sdd"), m.node("test", "impl"))

    validate_graph_manifest(manifest, {"sdd": []}, max_depth=3)
    assert "'sdd' -> ... -> 'test' is 3 nodes deep" in m.one_error(manifest, {"sdd": []}, max_depth=2)


def test_it_validates_a_five_thousand_node_chain_without_recursion_errors():
    chain = m.graph(m.node("n0"), *(m.node(f"n{i}", f"n{i - 1}") for i in range(1, 5_000)))

    validate_graph_manifest(chain, max_nodes=5_000, max_depth=5_000)
    assert "is 5000 nodes deep" in m.one_error(chain, max_nodes=5_000, max_depth=4_999)


# --- Reporting -------------------------------------------------------------------------------------------


def test_it_reports_every_problem_at_once():
    manifest = m.graph(
        m.node("a", "ghost"),
        m.node("a"),
        m.node("__x"),
        _loop_back("b", "a"),
        edges=[{"from": "a", "to": "nowhere", "edge_type": "zero_token"}],
    )

    errors = m.errors(manifest)

    assert len(errors) == 5
    assert set(errors) == {
        "node 'a': node_id is used by 2 nodes",
        "node '__x': node_ids starting with '__' are reserved for planning nodes",
        "node 'a': depends_on names unknown node 'ghost'",
        "edge 'a' -> 'nowhere': names unknown node 'nowhere'",
        "node 'b': on_fail.action is loop_back, which needs exactly one on_failure edge from it; it has 0",
    }
