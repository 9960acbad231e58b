"""How a DAG spec's tasks become manifest nodes: pi tasks agent nodes, shell tasks command nodes,
verdict gates mechanical judgments, retry policies and revision rounds the engine's own fields."""

from __future__ import annotations

import subprocess

import pytest

from graphs.domain.manifest_graph import loop_back_target, nodes_between
from graphs.planning.dag_spec_plan import dag_spec_plan
from tests.dag_specs import backend_test_prompt_files, backend_test_spec, gate, pi, shell, spec_of


def _nodes(spec) -> dict[str, dict]:
    return {node["node_id"]: node for node in dag_spec_plan(spec).manifest["nodes"]}


def test_a_pi_task_becomes_an_agent_node_run_by_its_role_with_its_write_boundaries():
    nodes = _nodes(spec_of(pi("impl", toolProfile="write", writeSet=["src/**"], forbiddenPaths=[".harness/**"],
                              outputContract="A list of the changed files.")))
    node = nodes["impl"]
    assert (node["subagent_type"], node["tool_profile"], node["write_set"], node["forbidden_paths"]) == (
        "implementer", "write", ["src/**"], [".harness/**"]
    )
    assert node["task_prompt"] == (
        "Do impl.\n\nOutput contract: A list of the changed files.\n\nWrite only inside: src/**"
    )
    assert "command" not in node


@pytest.mark.parametrize(("folder", "entered"), [("sub", True), ("link-out", False), ("sub/link-up", False)])
def test_a_shell_tasks_cwd_through_a_symlink_out_of_the_working_folder_runs_nothing(tmp_path, folder, entered):
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "sub").mkdir(parents=True)
    outside.mkdir()
    (work / "link-out").symlink_to(outside)
    (work / "sub" / "link-up").symlink_to("../..")
    task = shell("check", commands=["touch ran"])
    task["shell"]["cwd"] = folder
    command = _nodes(spec_of(task))["check"]["command"]

    done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)

    assert (done.returncode == 0) is entered
    assert bool(list(tmp_path.rglob("ran"))) is entered
    if not entered:
        landed = outside if folder == "link-out" else tmp_path
        assert (done.returncode, done.stderr.strip()) == (2, f"shell.cwd leaves the working folder: {landed}")


def test_a_pi_task_without_a_tool_profile_reads_only_and_is_told_so():
    node = _nodes(spec_of(pi("look")))["look"]
    assert node["tool_profile"] == "read"
    assert node["task_prompt"].endswith("Read-only: do not change any file.")


def test_a_shell_tasks_commands_run_one_per_line_under_sh_e_in_its_folder():
    task = shell("check", commands=["make lint", "python -m pytest -q"])
    task["shell"].update(cwd="backend", timeoutMs=90500)
    node = _nodes(spec_of(task))["check"]
    assert node["command"][:3] == ["sh", "-e", "-c"]
    assert node["command"][3].startswith("top=$(pwd -P)\ncd -P -- backend\n")
    assert node["command"][3].endswith("\nmake lint\npython -m pytest -q")
    assert node["timeout_seconds"] == 91
    assert node["on_fail"] == {"action": "hard_fail"}
    assert "task_prompt" not in node


def test_a_verdict_gate_is_a_zero_token_node_judged_by_the_verdict_check():
    plan = dag_spec_plan(spec_of(pi("review"), gate("gate", "review"), pi("next", "gate")))
    nodes = {node["node_id"]: node for node in plan.manifest["nodes"]}
    assert nodes["gate"]["judgment"] == {"kind": "mechanical", "check_ref": "verdict_says_pass"}
    assert "command" not in nodes["gate"]
    assert {"from": "review", "to": "gate", "edge_type": "zero_token"} in plan.manifest["edges"]
    # The reviewed task answers with a verdict line (the offline agent does, by its node type).
    assert (nodes["review"]["node_type"], nodes["next"]["node_type"]) == ("review_verdict", "implementer")


def test_a_retry_policy_becomes_the_nodes_retries_delays_and_kinds():
    policy = {"maxAttempts": 4, "backoff": "exponential", "initialDelayMs": 2000, "maxDelayMs": 5000,
              "retryCategories": ["timeout", "rate-limit"]}
    node = _nodes(spec_of(pi("a", retryPolicy=policy)))["a"]
    assert node["retry_policy"] == {"max_retries": 3, "delays_seconds": [2.0, 4.0, 5.0],
                                    "kinds": ["rate_limit", "timeout"]}


def test_a_fixed_backoff_waits_the_same_each_time():
    node = _nodes(spec_of(pi("a", retryPolicy={"maxAttempts": 3, "backoff": "fixed", "initialDelayMs": 1500})))["a"]
    assert node["retry_policy"] == {"max_retries": 2, "delays_seconds": [1.5]}


def test_a_revision_round_is_a_bounded_loop_back_rerunning_everything_in_between():
    plan = dag_spec_plan(spec_of(pi("plan"), pi("review", "plan"),
                                 gate("gate", "review", revision={"loopBackTo": "plan", "maxRounds": 1})))
    gate_node = next(node for node in plan.manifest["nodes"] if node["node_id"] == "gate")
    assert gate_node["on_fail"] == {"action": "loop_back", "max_attempts": 2}
    assert loop_back_target(plan.manifest, "gate") == "plan"
    assert nodes_between(plan.manifest, target="plan", failing="gate") == ["plan", "review", "gate"]


def test_a_markdown_prompt_is_its_prompt_body_section():
    nodes = {node["node_id"]: node for node in
             dag_spec_plan(backend_test_spec(), prompt_files=backend_test_prompt_files()).manifest["nodes"]}
    review = nodes["review-backend-cases-pi"]["task_prompt"]
    assert review.startswith("You are the Backend Test DAG **test case reviewer** (read-only).")
    assert "Recommended DAG Node Shape" not in review
    # The retrospective's report template, with its own headings inside a fence, is kept whole.
    assert "## 5. Recommendations" in nodes["test-retrospect-pi"]["task_prompt"]


def test_the_spec_fills_in_the_task_and_the_seed_spec_maps_each_executor():
    plan = dag_spec_plan(backend_test_spec(), prompt_files=backend_test_prompt_files())
    assert plan.title == "Backend test DAG template"
    assert plan.goal_text.startswith("End-to-end backend functional testing pipeline")
    assert len(plan.acceptance_criteria) == 8 and len(plan.constraints) == 17
    kinds = {node["node_id"]: ("command" if "command" in node else node.get("judgment", {}).get("check_ref", "agent"))
             for node in plan.manifest["nodes"]}
    assert kinds == {
        "analyze-inputs-pi": "agent", "generate-backend-functional-cases-pi": "agent",
        "review-backend-cases-pi": "agent", "review-backend-cases-gate-shell": "verdict_says_pass",
        "generate-backend-pytest-pi": "agent", "execute-backend-pytest-shell": "command", "test-retrospect-pi": "agent",
    }
