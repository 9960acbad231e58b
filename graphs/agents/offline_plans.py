"""What the offline agent plans: the catalog's graph for the planner, the coder's and the validator's
appends, a generic plan for any other org node, and the answers of a gap-driven planner.

Each plan depends only on the org node, the node ids the run already has (a new node never reuses
one) and whether the project runs commands.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from graphs.domain.catalogs import (
    BENCHMARK_JUDGE_PROMPT,
    NODE_REVIEW_JUDGE_PROMPT,
    PRD_JUDGE_PROMPT,
)

# What every text of the offline agent starts with, so nobody takes it for a model's.
LABEL = "[offline agent]"


def plan_text(org_node: str, existing_node_ids: Sequence[str], *, commands_allowed: bool) -> str:
    if org_node == "validator":
        manifest = _validator_manifest(existing_node_ids, commands_allowed=commands_allowed)
    else:
        planners = {"planner": _planner_manifest, "coder": _coder_manifest}
        manifest = planners.get(org_node, _generic_manifest)(existing_node_ids, org_node)
    summary = ", ".join(f"`{node['node_id']}`" for node in manifest["nodes"])
    return (
        f"{LABEL} This plan for `{org_node}` comes from the built-in offline agent: it follows the "
        "catalog and no language model was consulted.\n"
        f"Nodes: {summary}.\n\n"
        "```json\n" + json.dumps(manifest, indent=2) + "\n```\n"
    )


def gap_text(existing_node_ids: Sequence[str]) -> str:
    """A gap-driven round's answer: the first round plans the work and its review; once the run has
    nodes, the gap is closed. So a gap-driven run takes two rounds and then succeeds."""
    if existing_node_ids:
        answer: dict[str, Any] = {"tasks": [], "has_gap": False,
                                  "gap_detail": "done: the planned tasks have run"}
    else:
        answer = {"tasks": [_gap_task("gap_work", "Carry out the task and describe the result."),
                            _gap_task("gap_review", "Check the result against every acceptance criterion.",
                                      depends_on=["gap_work"])],
                  "has_gap": True, "gap_detail": "nothing has been done yet"}
    return (f"{LABEL} This gap answer comes from the built-in offline agent; no language model was consulted.\n\n"
            "```json\n" + json.dumps(answer, indent=2) + "\n```\n")


def _gap_task(task_id: str, instruction: str, *, depends_on: Sequence[str] = ()) -> dict[str, Any]:
    return {"metadata": {"task_id": task_id, "title": task_id.replace("_", " "), "instruction": instruction,
                         "depends_on": list(depends_on)},
            "context": {"background": "", "extend_props": {}},
            "goal": {"objective": instruction, "acceptances": [{"id": "ac1", "description": instruction}]}}


class _Ids:
    """Picks node ids that collide neither with the run's existing nodes nor with each other."""

    def __init__(self, existing: Collection[str]) -> None:
        self._taken = set(existing)

    def take(self, base: str) -> str:
        candidate, n = base, 1
        while candidate in self._taken:
            n += 1
            candidate = f"{base}_{n}"
        self._taken.add(candidate)
        return candidate


def _matching(existing: Sequence[str], names: Iterable[str]) -> list[str]:
    """Existing ids that are, or end in, one of ``names``: how the offline agent finds earlier stages."""
    wanted = tuple(names)
    return [
        node_id
        for node_id in existing
        if node_id in wanted or node_id.endswith(tuple("_" + n for n in wanted))
    ]


def _manifest(nodes: list[dict[str, Any]], zero_token: Collection[tuple[str, str]] = ()) -> dict[str, Any]:
    """Add a data edge for every dependency, plus the on_failure edge of every loop_back node."""
    edges = [
        {
            "from": dep,
            "to": node["node_id"],
            "edge_type": "zero_token" if (dep, node["node_id"]) in zero_token else "needs_judgment",
        }
        for node in nodes
        for dep in node["depends_on"]
    ]
    for node in nodes:
        target = node.pop("_loop_back_to", None)
        if target:
            edges.append({"from": node["node_id"], "to": target, "edge_type": "on_failure"})
    return {"nodes": nodes, "edges": edges}


def _llm(judge_prompt: str) -> dict[str, str]:
    return {"kind": "llm", "judge_prompt": judge_prompt}


def _mechanical(check_ref: str) -> dict[str, str]:
    return {"kind": "mechanical", "check_ref": check_ref}


def _planner_manifest(existing: Sequence[str], _org_node: str) -> dict[str, Any]:
    ids = _Ids(existing)
    brd, prd, sdd, bench, data, script = (
        ids.take(name) for name in ("brd", "prd", "sdd", "benchmark", "test_dataset", "test_script")
    )

    def doc(node_id: str, artifact_type: str, depends_on: list[str], **extra: Any) -> dict[str, Any]:
        return {
            "node_id": node_id,
            "artifact_type": artifact_type,
            "depends_on": depends_on,
            "promotes_to_artifact": {"artifact_type": artifact_type},
            **extra,
        }

    nodes = [
        doc(brd, "brd", []),
        doc(
            prd,
            "prd",
            [brd],
            judgment=_llm(PRD_JUDGE_PROMPT),
            on_fail={"action": "retry_self", "max_attempts": 2},
        ),
        doc(sdd, "sdd", [prd]),
        doc(
            bench,
            "benchmark",
            [prd, sdd],
            judgment=_llm(BENCHMARK_JUDGE_PROMPT),
            on_fail={"action": "loop_back", "max_attempts": 2},
            _loop_back_to=prd,
        ),
        doc(data, "test_dataset", [bench]),
        doc(
            script,
            "test_script",
            [bench, data],
            judgment=_mechanical("check_script_compiles"),
            on_fail={"action": "retry_self", "max_attempts": 2},
        ),
    ]
    return _manifest(nodes, zero_token={(data, script)})


def _coder_manifest(existing: Sequence[str], _org_node: str) -> dict[str, Any]:
    ids = _Ids(existing)
    impl, unit, check = (
        ids.take("coder_impl"),
        ids.take("coder_unit_test"),
        ids.take("coder_integration_check"),
    )
    review = _llm(NODE_REVIEW_JUDGE_PROMPT)
    nodes = [
        {
            "node_id": impl,
            "node_type": "impl",
            "depends_on": _matching(existing, ("sdd", "benchmark")),
            "task_prompt": (
                "Implement the change the task asks for, following the solution design and the benchmark "
                "among your inputs. Edit the repository in your working folder, keep to the task's "
                "constraints, and reply with a list of every file you changed and why."
            ),
        },
        {
            "node_id": unit,
            "node_type": "unit_test",
            "depends_on": [impl],
            "task_prompt": (
                "Write or update unit tests for the change described in your input, following the "
                "repository's existing test conventions. Reply with the test code you added."
            ),
            "judgment": review,
            "on_fail": {"action": "loop_back", "max_attempts": 2},
            "_loop_back_to": impl,
        },
        {
            "node_id": check,
            "node_type": "integration_check",
            "depends_on": [impl, unit],
            "task_prompt": (
                "Run the repository's test suite against the change and reply with the report: each "
                "test that passed or failed, and the output of every failure."
            ),
            "judgment": review,
            "on_fail": {"action": "retry_self", "max_attempts": 2},
            "promotes_to_artifact": {"artifact_type": "test_report"},
        },
    ]
    return _manifest(nodes)


def _validator_manifest(existing: Sequence[str], *, commands_allowed: bool) -> dict[str, Any]:
    ids = _Ids(existing)
    bench, data, script, verdict = (
        ids.take(name)
        for name in (
            "validator_independent_benchmark",
            "validator_test_dataset",
            "validator_test_script",
            "validator_final_verdict",
        )
    )
    script_prompt = (
        "Write a runnable Python script that checks the scenarios in your input against the "
        "repository in the working folder, using the test data, and exits non-zero on a failure."
    )
    checks = _matching(existing, ("integration_check",))
    command_nodes: list[dict[str, Any]] = []
    if commands_allowed:
        script_prompt += f" Save it in the working folder as `{script}.py`: a command node runs it there."
        run_script = ids.take("validator_run_test_script")
        # A failing check most likely shows a defect in the change: the coder's implementation reworks it.
        rework = next(iter(_matching(existing, ("impl",))), script) if checks else script
        command_nodes = [{
            "node_id": run_script,
            "node_type": "run_test_script",
            "depends_on": [script, *checks],
            "command": ["python3", f"{script}.py"],
            "timeout_seconds": 600,
            "on_fail": {"action": "loop_back", "max_attempts": 2},
            "_loop_back_to": rework,
        }]
    nodes = [
        {
            "node_id": bench,
            "node_type": "independent_benchmark",
            "depends_on": _matching(existing, ("prd",)),
            "task_prompt": (
                "Write your own acceptance scenarios for the task from its requirements alone, without "
                "reusing any earlier benchmark. Give each scenario an observable pass criterion."
            ),
        },
        {
            "node_id": data,
            "node_type": "test_dataset",
            "depends_on": [bench],
            "task_prompt": "Write test inputs with their expected outputs for the scenarios in your input.",
        },
        {
            "node_id": script,
            "node_type": "test_script",
            "depends_on": [bench, data],
            "task_prompt": script_prompt,
            "judgment": _mechanical("check_script_compiles"),
            "on_fail": {"action": "retry_self", "max_attempts": 2},
        },
        *command_nodes,
        {
            "node_id": verdict,
            "node_type": "final_verdict",
            "depends_on": [bench, script, *(node["node_id"] for node in command_nodes), *checks],
            "task_prompt": (
                "Decide whether the delivered work meets the task, from the scenarios, the check script "
                "and the test report in your inputs. Start with `VERDICT: pass`, `VERDICT: fail` or "
                "`VERDICT: inconclusive`; unless it is pass, add `ROOT_CAUSE: planning`, `ROOT_CAUSE: coder` "
                "or `ROOT_CAUSE: skill_defect`, then your reasoning."
            ),
            "judgment": _mechanical("verdict_says_pass"),
            "on_fail": {"action": "dynamic_loop_back", "max_attempts": 2},
        },
    ]
    return _manifest(nodes, zero_token={(data, script)})


def _generic_manifest(existing: Sequence[str], org_node: str) -> dict[str, Any]:
    node = {
        "node_id": _Ids(existing).take(f"{org_node}_work"),
        "node_type": "work",
        "depends_on": [],
        "task_prompt": (
            f"Carry out the `{org_node}` part of the task and reply with the result itself, not a "
            "description of the work."
        ),
    }
    return _manifest([node])


# --- node execution and judging -------------------------------------------------------------------
