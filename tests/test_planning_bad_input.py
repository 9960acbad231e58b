"""A corpus of broken planner outputs, each fed through the real planning path.

Every case must end the same way: a ``planning_failed`` run whose reason names what was wrong, no
partial manifest, one planning execution with its raw output and a closed log, and nothing raised but
``PlanningFailedError``. The agent answers the repair request with the same output, so each case also
goes through the repair round trip.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from graphs.logs.store import log_read
from graphs.models import WorkGraphRun
from graphs.planning.planner import plan_work_graph
from graphs.planning.planning_node import PlanningFailedError

pytestmark = pytest.mark.django_db

NOT_FOUND = "no graph_manifest JSON object (with a 'nodes' list) was found"


@dataclass(frozen=True)
class Case:
    id: str
    output: Callable[[], str]
    reason: str


def text(value: str) -> Callable[[], str]:
    return lambda: value


def manifest(nodes: object, edges: object = None, **extra: object) -> Callable[[], str]:
    """A fenced JSON manifest, as planners usually answer."""
    body = {"nodes": nodes, **({"edges": edges} if edges is not None else {}), **extra}
    return text("Here is the plan.\n```json\n" + json.dumps(body) + "\n```\n")


def n(node_id: object, *deps: str, **extra: object) -> dict:
    return {"node_id": node_id, "depends_on": list(deps), "task_prompt": f"Do {node_id}.", **extra}


def edge(source: object, target: object, edge_type: str = "needs_judgment") -> dict:
    return {"from": source, "to": target, "edge_type": edge_type}


def loop_back(node_id: str, *deps: str) -> dict:
    return n(node_id, *deps, on_fail={"action": "loop_back", "max_attempts": 2})


def binary_junk() -> str:
    rng = random.Random(9)
    return bytes(rng.randrange(256) for _ in range(20_000)).decode("latin-1")


def five_megabytes_of_prose() -> str:
    # Braces and quotes everywhere, a manifest that never closes: every candidate must be rejected cheaply.
    line = 'The "plan" has {steps: [1, 2]} and {"nodes": [{"node_id": "x", "task_prompt": "y"} ' + "x" * 3900 + "\n"
    return line * (5_000_000 // len(line))


def ten_thousand_nodes() -> str:
    nodes = [n(f"step_{i}", *([f"step_{i - 1}"] if i else [])) for i in range(10_000)]
    return json.dumps({"nodes": nodes, "edges": []})


def escaped_quotes() -> str:
    # Each brace lies inside a string with an escaped quote as the lexer's earlier paths read it, which
    # once sent every brace's own path on to the end of the text: quadratic, minutes for this size.
    return '{"a": "\\"' * 60_000


def nested_objects(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def nul_node_ids() -> str:
    return json.dumps({"nodes": [n("a\u0000"), n("a\u0000")], "edges": []})


CASES = [
    # Nothing that parses as a manifest.
    Case("empty output", text(""), NOT_FOUND),
    Case("whitespace only", text(" \n\t\n "), NOT_FOUND),
    Case("prose without json", text("I could not plan this task, sorry."), NOT_FOUND),
    Case("truncated json", text('{"nodes": [{"node_id": "a", "task_prompt": "Do a."}, {"node_id": "b"'), NOT_FOUND),
    Case("truncated inside a string", text('```json\n{"nodes": [{"node_id": "a", "task_prompt": "Do'), NOT_FOUND),
    Case("top-level array", text('[{"node_id": "a", "task_prompt": "Do a."}]'), NOT_FOUND),
    Case("manifest inside a json string",
         text(json.dumps({"result": json.dumps({"nodes": [n("a")], "edges": []})})), NOT_FOUND),
    Case("nodes as a dict", manifest({"a": {"task_prompt": "Do a."}}, []), NOT_FOUND),
    Case("nodes as a string", manifest("a, b, c", []), NOT_FOUND),
    Case("nodes null", manifest(None, []), NOT_FOUND),
    Case("wrapped nodes as a dict", text(json.dumps({"graph_manifest": {"nodes": {"a": {}}}})), NOT_FOUND),
    Case("trailing commas", text('{"nodes": [{"node_id": "a", "task_prompt": "Do a.",},], "edges": [],}'), NOT_FOUND),
    Case("python repr", text("{'nodes': [{'node_id': 'a', 'task_prompt': 'Do a.'}], 'edges': []}"), NOT_FOUND),
    Case("yaml", text("nodes:\n  - node_id: a\n    task_prompt: Do a.\nedges: []\n"), NOT_FOUND),
    Case("binary bytes", binary_junk, NOT_FOUND),
    Case("nul characters", text("\x00" * 64 + '{"nodes": [\x00{"node_id": "a"}]}' + "\x00"), NOT_FOUND),
    Case("deeply nested arrays", text("[" * 200_000), NOT_FOUND),
    Case("deeply nested objects", lambda: nested_objects(50_000), NOT_FOUND),
    Case("unbalanced braces", text("{" * 100_000 + '"nodes": []'), NOT_FOUND),
    Case("five megabytes of prose", five_megabytes_of_prose, NOT_FOUND),
    Case("escaped quotes in every string", escaped_quotes, NOT_FOUND),
    # A manifest that breaks a rule.
    Case("empty nodes", manifest([], []), "nodes is empty"),
    Case("nodes that are not objects", manifest(["a", "b"], []), "nodes[0]: must be an object"),
    Case("null node", manifest([n("a"), None], []), "nodes[1]: must be an object"),
    Case("missing node_id", manifest([{"task_prompt": "Do it."}], []), "node_id must be a non-empty string"),
    Case("numeric node_id", manifest([n(7)], []), "node_id must be a non-empty string"),
    Case("blank node_id", manifest([n("  ")], []), "node_id must be a non-empty string"),
    Case("neither artifact_type nor task_prompt", manifest([{"node_id": "a"}], []), "needs artifact_type"),
    Case("both artifact_type and task_prompt", manifest([n("a", artifact_type="prd")], []),
         "has both artifact_type and task_prompt"),
    Case("unknown artifact_type", manifest([{"node_id": "a", "artifact_type": "poem"}], []),
         "artifact_type 'poem' is not one of"),
    Case("task_prompt not a string", manifest([{"node_id": "a", "task_prompt": ["Do", "a"]}], []),
         "task_prompt must be a non-empty string"),
    Case("depends_on a string", manifest([n("a"), {**n("b"), "depends_on": "a"}], []),
         "depends_on must be a list of node_id strings"),
    Case("dependency on a missing node", manifest([n("a", "ghost")], []), "depends_on names unknown node 'ghost'"),
    Case("self-loop through depends_on", manifest([n("a", "a")], []), "node 'a': depends on itself"),
    Case("self-loop through an edge", manifest([n("a")], [edge("a", "a")]), "self-loop"),
    Case("two-node cycle", manifest([n("a", "b"), n("b", "a")], []), "dependency cycle"),
    Case("cycle through edges", manifest([n("a"), n("b"), n("c")], [edge("a", "b"), edge("b", "c"), edge("c", "a")]),
         "dependency cycle"),
    Case("duplicate ids", manifest([n("a"), n("a")], []), "node_id is used by 2 nodes"),
    Case("reserved planning id", manifest([n("__planning__")], []), "reserved for planning nodes"),
    Case("edge to nowhere", manifest([n("a")], [edge("a", "nowhere")]), "names unknown node 'nowhere'"),
    Case("edges as a dict", manifest([n("a")], {"a": "b"}), "edges must be a list"),
    Case("edge that is not an object", manifest([n("a")], ["a->b"]), "edges[0]: must be an object"),
    Case("edge without ends", manifest([n("a")], [{"edge_type": "zero_token"}]),
         "from and to must be non-empty node_id strings"),
    Case("unknown edge_type", manifest([n("a"), n("b", "a")], [edge("a", "b", "telepathy")]),
         "edge_type 'telepathy' is not one of"),
    Case("loop_back without its edge", manifest([n("a"), loop_back("b", "a")], []),
         "needs exactly one on_failure edge"),
    Case("loop-back to a descendant",
         manifest([n("a"), loop_back("b", "a"), n("c", "b")], [edge("b", "c", "on_failure")]),
         "loop_back target 'c' is not an upstream dependency of 'b'"),
    Case("on_failure edge without loop_back", manifest([n("a"), n("b", "a")], [edge("b", "a", "on_failure")]),
         "whose on_fail.action is not loop_back"),
    Case("dynamic_loop_back off the final verdict", manifest([n("a", on_fail={"action": "dynamic_loop_back"})], []),
         "dynamic_loop_back is only allowed on a node with node_type 'final_verdict'"),
    Case("unknown on_fail action", manifest([n("a", on_fail={"action": "pray"})], []),
         "on_fail.action 'pray' is not one of"),
    Case("on_fail not an object", manifest([n("a", on_fail="retry")], []), "on_fail must be an object"),
    Case("zero max_attempts", manifest([n("a", on_fail={"action": "retry_self", "max_attempts": 0})], []),
         "max_attempts must be a positive integer"),
    Case("unknown judgment kind", manifest([n("a", judgment={"kind": "vibes"})], []), "judgment.kind 'vibes'"),
    Case("llm judgment without placeholder", manifest([n("a", judgment={"kind": "llm", "judge_prompt": "Good?"})], []),
         "{content} placeholder"),
    Case("mechanical judgment without check", manifest([n("a", judgment={"kind": "mechanical"})], []),
         "needs check_ref"),
    Case("promotion without a type", manifest([n("a", promotes_to_artifact={})], []),
         "promotes_to_artifact must be an object with a non-empty artifact_type"),
    Case("blank subagent_type", manifest([n("a", subagent_type="")], []), "subagent_type must be a non-empty string"),
    Case("ten thousand nodes", ten_thousand_nodes, "10000 nodes, over the limit of 500"),
    Case("chain deeper than allowed", manifest([n(f"s{i}", *([f"s{i - 1}"] if i else [])) for i in range(60)], []),
         "is 60 nodes deep, over the limit of 50"),
    Case("nul characters in node ids", nul_node_ids, "node_id is used by 2 nodes"),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_broken_plan_ends_planning_failed_with_its_reason_and_nothing_half_written(task, scripted_runner, case):
    output = case.output()
    scripted_runner.replies[("plan", "planner")] = output
    with pytest.raises(PlanningFailedError) as failure:
        plan_work_graph("planner", task, task.goal_text)
    reason = failure.value.reason
    assert case.reason in reason
    run = WorkGraphRun.objects.get(task=task)
    assert (run.status, run.graph_manifest, run.manifest_version) == ("planning_failed", {}, 0)
    assert case.reason in run.error
    [planning] = run.executions.all()
    assert planning.node_id == "__planning__" and planning.status == "failed"
    assert case.reason in planning.error
    assert planning.output_payload["manifest"] is None
    assert planning.output_payload["raw_response"] == output.replace("\x00", "\ufffd")  # kept, storably
    assert planning.log_file.status == "closed"
    assert [line["event"] for line in log_read(log_file=planning.log_file)][-1] == "planning_failed"
    assert [call[0] for call in scripted_runner.calls] == ["plan", "plan"]  # the answer, then the repair


@pytest.mark.django_db
def test_a_planning_call_that_breaks_the_console_ends_recorded_not_running(task, scripted_runner):
    def breaks(call):
        raise RuntimeError("a bug in a runner")

    scripted_runner.replies[("plan", "planner")] = breaks

    with pytest.raises(PlanningFailedError) as caught:
        plan_work_graph("planner", task, task.goal_text)

    run = WorkGraphRun.objects.get(task=task)
    planning = run.executions.get()
    assert "planning stopped by an internal error: RuntimeError('a bug in a runner')" in caught.value.reason
    assert (run.status, planning.status) == ("planning_failed", "failed")
    assert "RuntimeError" in planning.error
