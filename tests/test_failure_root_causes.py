"""A run tells its root-cause failures from the nodes that failed or were blocked because of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from graphs.domain.failure_roles import FailureRole, failure_roles
from graphs.engine import run_start
from graphs.reads.graph import run_failure_roles
from tests.graph_json import graph_json
from tests.run_builders import edges_for, node, planned_run

CASES = json.loads((Path(__file__).parent / "fixtures" / "failure_roles.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_each_failed_or_blocked_node_gets_its_role(case):
    roles = failure_roles(dependencies=case["dependencies"], statuses=case["statuses"])
    assert {node_id: role.as_dict() for node_id, role in roles.items()} == case["roles"]


def test_a_dependency_cycle_does_not_loop_forever():
    roles = failure_roles(dependencies={"a": ["b"], "b": ["a"]}, statuses={"a": "failed", "b": "failed"})
    assert set(roles) == {"a", "b"}


def test_on_failure_edges_are_not_dependencies():
    # ``review`` loops back to ``spec`` on failure; ``spec`` still depends on nothing.
    manifest = {"nodes": [{"node_id": "spec", "depends_on": []}, {"node_id": "review", "depends_on": ["spec"]}],
                "edges": [{"from": "review", "to": "spec", "edge_type": "on_failure"}]}
    roles = run_failure_roles(manifest, {"spec": "failed", "review": "blocked"})
    assert roles == {"spec": FailureRole("root_cause"), "review": FailureRole("blocked", ("spec",))}


@pytest.mark.django_db
def test_the_run_graph_data_marks_the_root_cause_and_what_it_blocked(task, alice, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "build")] = "```python\ndef broken(:\n```"
    nodes = [node("spec"), node("build", "spec", judgment={"kind": "mechanical", "check_ref": "check_script_compiles"}),
             node("test", "build"), node("ship", "test"), node("docs", "spec")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    client = Client()
    client.force_login(alice)

    graph = graph_json(client, run)

    roles = {item["node_id"]: item["failure_role"] for item in graph["nodes"] if item["kind"] != "planning"}
    assert roles == {
        "spec": None, "docs": None,
        "build": {"role": "root_cause", "because_of": []},
        "test": {"role": "blocked", "because_of": ["build"]},
        "ship": {"role": "blocked", "because_of": ["build"]},
    }
