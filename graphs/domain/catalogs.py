"""Catalogs the planning prompts hand to agents, kept as plain data.

They are suggestions, not requirements: an agent may use any subset of the entries, in any order, and
override their suggested judgment. Prompts serialise them with ``json.dumps``, which is why the judge
prompts below carry a literal ``{content}`` placeholder that must never go through ``str.format``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ORG_NODES = ("planner", "coder", "validator")

ARTIFACT_TYPES = ("brd", "prd", "sdd", "benchmark", "test_dataset", "test_script", "test_case_manifest")

# Where a failing final verdict may send the run back to (``on_fail.action = "dynamic_loop_back"``).
ROOT_CAUSE_CATEGORIES = ("planning", "coder", "skill_defect")

ORG_NODE_ROLES: Mapping[str, str] = {
    "planner": (
        "You turn a task into a plan of documents: business and product requirements, a solution "
        "design, a benchmark with observable pass criteria, and test material where it fits."
    ),
    "coder": (
        "You implement what the planning documents describe: code changes, their unit tests, and a "
        "real run of the test suite that reports what passed and what failed."
    ),
    "validator": (
        "You give an independent second opinion on the delivered work: your own held-out acceptance "
        "scenarios, checks that actually run, and a final verdict with a named root cause when it fails."
    ),
}

PRD_JUDGE_PROMPT = (
    "You are reviewing a product requirements document for contradictions only. Look for two "
    "requirements that cannot hold at the same time, or one scenario described in two incompatible "
    "ways. Gaps, vague wording and style are out of scope: do not report them. Set ok to false only "
    "for a genuine contradiction and describe each one as an issue.\n\nThe document:\n\n{content}"
)

BENCHMARK_JUDGE_PROMPT = (
    "You are reviewing a benchmark of acceptance scenarios. Every scenario must name an observable "
    "result that a person or a script can check as pass or fail, and together the scenarios must cover "
    "the requirements they were derived from. Set ok to false when a scenario has no checkable result "
    "or a requirement has no scenario, and list each case as an issue.\n\nThe benchmark:\n\n{content}"
)

NODE_REVIEW_JUDGE_PROMPT = (
    "You are reviewing one node's output. It must be the deliverable itself (code, test output, a "
    "structured analysis), not prose reporting that the work was done ('I ran the tests and they "
    "passed'). Set ok to false when the content narrates instead of delivering, or is plainly "
    "incomplete or wrong for what was asked, and list each concrete problem as an issue.\n\n"
    "The output:\n\n{content}"
)

PLANNER_ARTIFACT_CATALOG: Sequence[Mapping[str, Any]] = (
    {
        "artifact_type": "brd",
        "title": "Business requirements document (BRD)",
        "description": "Business requirements: why the goal matters, for whom, and what success means.",
    },
    {
        "artifact_type": "prd",
        "title": "Product requirements document (PRD)",
        "description": "Product requirements: the concrete scenarios and behaviour the goal calls for.",
        "suggested_judgment": {"kind": "llm", "judge_prompt": PRD_JUDGE_PROMPT},
        "suggested_on_fail": {"action": "retry_self", "max_attempts": 2},
    },
    {
        "artifact_type": "sdd",
        "title": "Solution design document (SDD)",
        "description": "Solution design: how the requirements will be implemented and why that way.",
    },
    {
        "artifact_type": "benchmark",
        "title": "Benchmark",
        "description": "Acceptance scenarios, each with an observable pass criterion.",
        "suggested_judgment": {"kind": "llm", "judge_prompt": BENCHMARK_JUDGE_PROMPT},
        "suggested_on_fail": {"action": "loop_back", "max_attempts": 2},
    },
    {
        "artifact_type": "test_dataset",
        "title": "Test dataset",
        "description": (
            "Test inputs with their expected outputs. Only for goals that have natural test data; "
            "many (configuration, UI wiring) do not, and then this node is left out."
        ),
    },
    {
        "artifact_type": "test_script",
        "title": "Test script",
        "description": (
            "A runnable Python script that checks the benchmark's scenarios mechanically. Only when "
            "such a check is genuinely possible for the goal."
        ),
        "suggested_judgment": {"kind": "mechanical", "check_ref": "check_script_compiles"},
        "suggested_on_fail": {"action": "retry_self", "max_attempts": 2},
    },
    {
        "artifact_type": "test_case_manifest",
        "title": "Test case manifest (Backend Test Case Manifest v1)",
        "description": (
            "One JSON object mapping the task's acceptance criteria (AC-1, AC-2, … as the task lists them) to "
            "test cases: schemaVersion 1; sourceBinding {taskId, requirementPath, requirementSha256, "
            "referencePaths, requirementIds}; cases [{caseId like BE-EXPORT-001, acIds, title, category, "
            "automationStatus planned|generated|skipped|unsupported, file and symbol when generated, gapReason "
            "when skipped or unsupported}]; evidenceGaps [{acId or caseId, description}]. Leave coverage "
            "figures out: the console works them out from the cases."
        ),
        "suggested_on_fail": {"action": "retry_self", "max_attempts": 2},
    },
)

CODER_NODE_CATALOG: Sequence[Mapping[str, Any]] = (
    {"node_type": "impl", "description": "The code changes that implement the solution design."},
    {
        "node_type": "unit_test",
        "description": "New or updated unit tests for the change, following the repository's conventions.",
        "suggested_judgment": {"kind": "llm", "judge_prompt": NODE_REVIEW_JUDGE_PROMPT},
        "suggested_on_fail": {"action": "loop_back", "max_attempts": 2},
    },
    {
        "node_type": "integration_check",
        "description": (
            "Runs the real test suite or benchmark script against the change and reports each pass "
            "and failure; the report itself, not a sentence saying it was run."
        ),
        "suggested_judgment": {"kind": "llm", "judge_prompt": NODE_REVIEW_JUDGE_PROMPT},
        "suggested_on_fail": {"action": "retry_self", "max_attempts": 2},
        "suggested_promotes_to_artifact": {"artifact_type": "test_report"},
    },
    {
        "node_type": "test_script",
        "description": (
            "A standalone runnable Python script the deliverable ships with (a reproduction or a "
            "benchmark check), when unit tests and the integration check do not already cover it."
        ),
        "suggested_judgment": {"kind": "mechanical", "check_ref": "check_script_compiles"},
        "suggested_on_fail": {"action": "retry_self", "max_attempts": 2},
    },
)

VALIDATOR_NODE_CATALOG: Sequence[Mapping[str, Any]] = (
    {
        "node_type": "independent_benchmark",
        "description": (
            "Your own held-out acceptance scenarios, written without reusing the planner's or the "
            "coder's benchmark, so the verdict is a genuine second opinion."
        ),
    },
    {"node_type": "test_dataset", "description": "Test inputs and expected outputs, when the goal has them."},
    {
        "node_type": "test_script",
        "description": (
            "A runnable Python script that checks the independent benchmark against the real "
            "repository. Its output is the script itself (one fenced code block): where the project allows "
            "commands, the engine saves it as `<node_id>.py` in the working folder and runs it there with "
            "python3, and its exit code judges the node, so it must contain real commands and exit non-zero "
            "on a failure."
        ),
        "suggested_judgment": {"kind": "mechanical", "check_ref": "check_script_compiles"},
        "suggested_on_fail": {"action": "retry_self", "max_attempts": 2},
    },
    {
        "node_type": "final_verdict",
        "description": (
            "Exactly one node of this type, depending on every node whose output the verdict needs. "
            "Its output starts with a line `VERDICT: pass`, `VERDICT: fail` or `VERDICT: inconclusive`; "
            "when it is not pass, a line `ROOT_CAUSE: planning`, `ROOT_CAUSE: coder` or "
            "`ROOT_CAUSE: skill_defect` follows, then the reasoning."
        ),
        "suggested_judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"},
        "suggested_on_fail": {"action": "dynamic_loop_back", "max_attempts": 2},
    },
)

# Offered only in projects that allow commands: elsewhere a command node would fail without running.
VALIDATOR_COMMAND_NODE_CATALOG: Sequence[Mapping[str, Any]] = (
    {
        "node_type": "run_test_script",
        "description": (
            "A command node: no agent and no task_prompt; the engine runs its `command` (an argv list, no "
            "shell) in the working folder, and the exit code decides (0 passes, or the node's `expect_exit`). "
            'Use {"command": ["python3", "<test_script node_id>.py"], "timeout_seconds": 600} depending on '
            "the test_script node, whose task_prompt then asks for the script to be saved as "
            "`<its node_id>.py` in the working folder, and make the final verdict depend on this node: the "
            "verdict then rests on a check that really ran. Its output is the end of what the command printed; "
            "when it fails, loop back to the implementation the script checks."
        ),
        "suggested_on_fail": {"action": "loop_back", "max_attempts": 2},
    },
)

_NODE_CATALOGS: Mapping[str, Sequence[Mapping[str, Any]]] = {
    "coder": CODER_NODE_CATALOG,
    "validator": VALIDATOR_NODE_CATALOG,
}
_COMMAND_NODE_CATALOGS: Mapping[str, Sequence[Mapping[str, Any]]] = {"validator": VALIDATOR_COMMAND_NODE_CATALOG}


def node_catalog(org_node: str, *, commands_allowed: bool = False) -> Sequence[Mapping[str, Any]]:
    """Return the suggested node catalog of a generic org node; empty for an org node without one.

    ``commands_allowed`` (the project's ``allow_commands``) adds the command nodes the org node may plan.
    """
    catalog = tuple(_NODE_CATALOGS.get(org_node, ()))
    return catalog + tuple(_COMMAND_NODE_CATALOGS.get(org_node, ())) if commands_allowed else catalog


def artifact_entry(artifact_type: str) -> Mapping[str, Any] | None:
    """Return the planner catalog entry for ``artifact_type``, or None for a type outside the catalog."""
    return next((e for e in PLANNER_ARTIFACT_CATALOG if e["artifact_type"] == artifact_type), None)
