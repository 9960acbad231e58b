"""The graph questions the execution engine asks of a validated manifest."""

import copy
from typing import Any

import pytest

from graphs.domain.manifest import merge_manifests
from graphs.domain.manifest_graph import (
    ManifestError,
    data_dependencies,
    downstream_of,
    graph_depth,
    loop_back_target,
    manifest_node_ids,
    nodes_between,
    topological_order,
    upstream_of,
)


def _node(node_id: str, *deps: str) -> dict[str, Any]:
    return {"node_id": node_id, "depends_on": list(deps), "task_prompt": f"Do {node_id}."}


# prd feeds sdd and bench; sdd feeds bench through an edge only; bench loops back to prd; notes is
# off to the side; report follows bench.
PIPELINE = {
    "nodes": [
        _node("notes"),
        _node("prd"),
        _node("sdd", "prd"),
        {**_node("bench", "prd"), "on_fail": {"action": "loop_back"}},
        _node("report", "bench"),
    ],
    "edges": [
        {"from": "sdd", "to": "bench", "edge_type": "needs_judgment"},
        {"from": "bench", "to": "prd", "edge_type": "on_failure"},
    ],
}


def _chain(length: int) -> dict[str, Any]:
    return {"nodes": [_node("n0"), *(_node(f"n{i}", f"n{i - 1}") for i in range(1, length))], "edges": []}


def test_node_ids_come_in_manifest_order():
    assert manifest_node_ids(PIPELINE) == ["notes", "prd", "sdd", "bench", "report"]


def test_data_dependencies_join_depends_on_and_data_edges_but_not_on_failure_edges():
    assert data_dependencies(PIPELINE) == {
        "notes": [],
        "prd": [],
        "sdd": ["prd"],
        "bench": ["prd", "sdd"],
        "report": ["bench"],
    }


def test_data_dependencies_leave_out_nodes_outside_the_manifest():
    addition = {"nodes": [_node("impl", "sdd"), _node("test", "impl")], "edges": []}

    assert data_dependencies(addition) == {"impl": [], "test": ["impl"]}


def test_topological_order_puts_dependencies_first_and_otherwise_keeps_manifest_order():
    manifest = {"nodes": [_node("c", "b"), _node("a"), _node("b"), _node("d")], "edges": []}

    assert topological_order(manifest) == ["a", "b", "c", "d"]
    assert topological_order(PIPELINE) == ["notes", "prd", "sdd", "bench", "report"]


def test_topological_order_rejects_a_cycle_naming_its_nodes():
    with pytest.raises(ManifestError, match="'a' -> 'b' -> 'a'"):
        topological_order({"nodes": [_node("a", "b"), _node("b", "a")], "edges": []})


def test_upstream_and_downstream_are_transitive_and_ignore_on_failure_edges():
    assert upstream_of(PIPELINE, "report") == {"bench", "sdd", "prd"}
    assert upstream_of(PIPELINE, "prd") == set()
    assert downstream_of(PIPELINE, "prd") == {"sdd", "bench", "report"}
    assert downstream_of(PIPELINE, "report") == set()


def test_queries_about_an_unknown_node_raise_key_error():
    for query in (upstream_of, downstream_of, loop_back_target):
        with pytest.raises(KeyError):
            query(PIPELINE, "ghost")


def test_nodes_between_lists_what_a_loop_back_reruns_in_order():
    assert nodes_between(PIPELINE, target="prd", failing="bench") == ["prd", "sdd", "bench"]
    assert nodes_between(PIPELINE, target="sdd", failing="report") == ["sdd", "bench", "report"]
    assert nodes_between(PIPELINE, target="bench", failing="bench") == ["bench"]


def test_nodes_between_rejects_a_target_that_is_not_upstream():
    with pytest.raises(ValueError, match="'notes' is not upstream of 'bench'"):
        nodes_between(PIPELINE, target="notes", failing="bench")


def test_loop_back_target_follows_the_on_failure_edge():
    assert loop_back_target(PIPELINE, "bench") == "prd"
    assert loop_back_target(PIPELINE, "report") is None


def test_merge_concatenates_nodes_and_edges_into_a_new_manifest():
    addition = {
        "nodes": [_node("impl", "sdd")],
        "edges": [{"from": "sdd", "to": "impl", "edge_type": "needs_judgment"}],
    }
    before = copy.deepcopy((PIPELINE, addition))

    merged = merge_manifests(PIPELINE, addition)

    assert manifest_node_ids(merged) == ["notes", "prd", "sdd", "bench", "report", "impl"]
    assert merged["edges"] == PIPELINE["edges"] + addition["edges"]
    assert (PIPELINE, addition) == before
    merged["nodes"][0]["depends_on"].append("prd")
    assert PIPELINE["nodes"][0]["depends_on"] == []


def test_merge_accepts_an_empty_run_manifest():
    assert merge_manifests({}, {"nodes": [_node("a")]}) == {"nodes": [_node("a")], "edges": []}


def test_graph_depth_counts_the_nodes_on_the_longest_chain():
    assert graph_depth({"nodes": [], "edges": []}) == 0
    assert graph_depth({"nodes": [_node("solo")], "edges": []}) == 1
    assert graph_depth(PIPELINE) == 4


def test_a_five_thousand_node_chain_raises_no_recursion_error():
    chain = _chain(5_000)

    assert graph_depth(chain) == 5_000
    assert topological_order(chain)[-3:] == ["n4997", "n4998", "n4999"]
    assert len(upstream_of(chain, "n4999")) == 4_999
    assert len(downstream_of(chain, "n0")) == 4_999
    assert len(nodes_between(chain, target="n0", failing="n4999")) == 5_000
