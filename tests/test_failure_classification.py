"""Every failed attempt is classified by deterministic rules, with evidence and a capped confidence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from graphs.agents import AgentError
from graphs.domain.failures import ASSERTION_CAP, CATEGORIES, ERROR_CAP, FAILURE_RULES, FailureFacts, failure_classify
from graphs.engine import executions_reap, run_start
from graphs.models import WorkNodeExecution
from graphs.planning.planner import plan_work_graph
from graphs.planning.planning_node import PlanningFailedError
from tests.run_builders import command_node, edges_for, latest, node, planned_run
from tests.scripted_agents import judge

PYTEST_ASSERTION = """\
============================= test session starts ==============================
collected 3 items

tests/test_export.py ..F                                                 [100%]

=================================== FAILURES ===================================
___________________________ test_csv_has_header ________________________________
    def test_csv_has_header():
>       assert export_csv([])[0] == "id,name"
E       AssertionError: assert 'id;name' == 'id,name'
=========================== short test summary info ============================
FAILED tests/test_export.py::test_csv_has_header - AssertionError
========================= 1 failed, 2 passed in 0.12s ==========================
"""

PYTEST_COLLECTION = """\
==================================== ERRORS ====================================
__________________ ERROR collecting tests/test_export.py _______________________
ImportError while importing test module '/repo/tests/test_export.py'.
E   ModuleNotFoundError: No module named 'reports.csv'
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
"""

PYTEST_RERUN = """\
tests/test_export.py::test_upload RERUN
tests/test_export.py::test_upload FAILED
FAILED tests/test_export.py::test_upload - AssertionError
=================== 1 failed, 4 passed, 1 rerun in 3.02s ===================
"""


def command_judgment(exit_code: int | None, output: str = "", *, timed_out: bool = False) -> dict:
    return {"ok": False, "kind": "command", "exit_code": exit_code, "timed_out": timed_out,
            "issues": [f"`pytest` exited with code {exit_code} (expected 0). The end of its output:\n{output}"]}


VERDICT_FAILED = {"kind": "mechanical", "check_ref": "verdict_says_pass", "issues": ["the verdict is 'fail', not pass"]}


# What a failed attempt reported → the category, the cap on its confidence, and the rule that decided.
CORPUS = [
    pytest.param(FailureFacts(agent_error_kind="timeout", error="agent error (timeout): no answer in 600 s"),
                 "EnvFailure", ERROR_CAP, "agent_unreachable", id="agent-timeout"),
    pytest.param(FailureFacts(agent_error_kind="auth", error="agent error (auth): invalid api key"),
                 "EnvFailure", ERROR_CAP, "agent_unreachable", id="agent-auth"),
    pytest.param(FailureFacts(agent_error_kind="max_turns", error="agent error (max_turns): stopped after 40 turns"),
                 "EnvFailure", ERROR_CAP, "agent_limits", id="agent-turn-limit"),
    pytest.param(FailureFacts(agent_error_kind="invalid_output", error="agent error (invalid_output): not JSON"),
                 "ContractMismatch", ERROR_CAP, "agent_invalid_output", id="agent-invalid-output"),
    pytest.param(FailureFacts(judgment={"kind": "commands_disabled", "issues": ["the project runs no commands"]}),
                 "EnvFailure", ERROR_CAP, "commands_disabled", id="commands-disabled"),
    pytest.param(FailureFacts(judgment={"kind": "external_timeout", "issues": ["no report came within 60 s"]}),
                 "EnvFailure", ERROR_CAP, "external_no_report", id="external-no-report"),
    pytest.param(FailureFacts(judgment={"kind": "write_set", "issues": ["docs/x.md is outside the write set"]}),
                 "ContractMismatch", ERROR_CAP, "write_set_violated", id="write-set"),
    pytest.param(FailureFacts(judgment={"kind": "merge_conflict", "issues": ["conflict in app.py"]}),
                 "ContractMismatch", ERROR_CAP, "merge_conflict", id="merge-conflict"),
    pytest.param(FailureFacts(judgment=command_judgment(None, "1 failed", timed_out=True)),
                 "EnvFailure", ERROR_CAP, "command_timed_out", id="command-timeout-beats-its-output"),
    pytest.param(FailureFacts(judgment=command_judgment(127, "sh: pytest: command not found")),
                 "EnvFailure", ERROR_CAP, "command_not_runnable", id="exit-127"),
    pytest.param(FailureFacts(judgment=command_judgment(137)),
                 "EnvFailure", ERROR_CAP, "command_killed", id="exit-137-killed"),
    pytest.param(FailureFacts(judgment=command_judgment(4, "ERROR: file or directory not found: tests/api")),
                 "ContractMismatch", ERROR_CAP, "pytest_usage_error", id="pytest-exit-4"),
    pytest.param(FailureFacts(judgment=command_judgment(5, "collected 0 items\n=== no tests ran in 0.01s ===")),
                 "ContractMismatch", ERROR_CAP, "no_tests_collected", id="pytest-no-tests"),
    pytest.param(FailureFacts(judgment=command_judgment(2, PYTEST_COLLECTION)),
                 "TestBug", ERROR_CAP, "collection_error", id="collection-error-is-never-a-product-bug"),
    pytest.param(FailureFacts(output="E       fixture 'client' not found\n1 error", judgment={"kind": "report"}),
                 "TestBug", ERROR_CAP, "fixture_missing", id="fixture-missing"),
    pytest.param(FailureFacts(judgment={"kind": "mechanical", "check_ref": "check_script_compiles",
                                        "issues": ["the script does not compile: invalid syntax (line 3)"]}),
                 "TestBug", ERROR_CAP, "script_does_not_compile", id="script-does-not-compile"),
    pytest.param(FailureFacts(judgment=command_judgment(1, "Traceback (most recent call last):\n"
                                                          "ModuleNotFoundError: No module named 'requests'")),
                 "EnvFailure", ERROR_CAP, "import_error", id="module-not-found"),
    pytest.param(FailureFacts(judgment=command_judgment(1, "psycopg.OperationalError: connection failed: "
                                                          "Connection refused\n\tIs the server running?")),
                 "EnvFailure", ERROR_CAP, "connection_refused", id="connection-refused"),
    pytest.param(FailureFacts(judgment=command_judgment(1, "requests.exceptions.ReadTimeout: read timed out")),
                 "EnvFailure", ERROR_CAP, "timeout", id="read-timed-out"),
    pytest.param(FailureFacts(error="database connection lost: server closed the connection unexpectedly"),
                 "EnvFailure", ERROR_CAP, "infrastructure_lost", id="database-lost"),
    pytest.param(FailureFacts(error="worker host-1:42 stopped (no heartbeat since 10:01:02)"),
                 "EnvFailure", ERROR_CAP, "infrastructure_lost", id="worker-lost"),
    pytest.param(FailureFacts(error="workspace error: git worktree add failed"),
                 "EnvFailure", ERROR_CAP, "infrastructure_lost", id="workspace-error"),
    pytest.param(FailureFacts(judgment=command_judgment(1, PYTEST_RERUN)),
                 "FlakyTest", ERROR_CAP, "rerun_disagrees", id="rerun-shows-flaky"),
    pytest.param(FailureFacts(judgment=command_judgment(1, "tests/test_export.py::test_upload RERUN\n"
                                                          "tests/test_export.py::test_upload FAILED")),
                 "FlakyTest", ERROR_CAP, "rerun_disagrees", id="rerun-line-without-summary"),
    pytest.param(FailureFacts(judgment={"kind": "mechanical", "issues": ["AssertionError: rerun it"]}),
                 "ProductBug", ASSERTION_CAP, "assertion_failed", id="the-word-rerun-is-no-rerun"),
    pytest.param(FailureFacts(judgment=command_judgment(1, PYTEST_ASSERTION)),
                 "ProductBug", ASSERTION_CAP, "assertion_failed", id="pytest-assertion"),
    pytest.param(FailureFacts(output="Traceback:\nAssertionError: totals differ", judgment={"kind": "report"}),
                 "ProductBug", ASSERTION_CAP, "assertion_failed", id="reported-assertion"),
    pytest.param(FailureFacts(output="VERDICT: fail\nROOT_CAUSE: coder\nThe export drops the header.",
                              judgment={"kind": "mechanical", "issues": ["the verdict is 'fail', not pass"]}),
                 "ProductBug", ASSERTION_CAP, "verdict_blames_code", id="verdict-blames-the-code"),
    pytest.param(FailureFacts(output="VERDICT: fail\n**ROOT_CAUSE:** planning\nThe PRD missed CSV.",
                              judgment={"kind": "mechanical", "issues": ["the verdict is 'fail', not pass"]}),
                 "ContractMismatch", ERROR_CAP, "verdict_blames_plan", id="verdict-blames-the-plan"),
    pytest.param(FailureFacts(output="All good.", judgment={"kind": "mechanical",
                                                           "issues": ["the output has no 'VERDICT:' line"]}),
                 "ContractMismatch", ERROR_CAP, "output_off_contract", id="no-verdict-line"),
    pytest.param(FailureFacts(output="All good.", judgment={
        "kind": "mechanical", "issues": ["the output has no line that starts with 'VERDICT:'"]}),
                 "ContractMismatch", ERROR_CAP, "output_off_contract", id="no-line-starting-with-verdict"),
    pytest.param(FailureFacts(output='VERDICT: FAIL\n```json\n{"root_cause_category": "coder"}\n```',
                              judgment={"kind": "mechanical", "issues": ["the verdict is 'FAIL', not pass"]}),
                 "ProductBug", ASSERTION_CAP, "verdict_blames_code", id="verdict-json-blames-the-code"),
    pytest.param(FailureFacts(output="VERDICT: fail\nThe export still drops the header row.", judgment=VERDICT_FAILED),
                 "ProductBug", ERROR_CAP, "verdict_fails", id="a-failing-verdict-naming-no-cause"),
    pytest.param(FailureFacts(output="VERDICT: fail\nRoot cause: planning\nThe suite timed out: the PRD set no limit.",
                              judgment=VERDICT_FAILED),
                 "ContractMismatch", ERROR_CAP, "verdict_blames_plan", id="a-verdict-is-read-before-its-words"),
    pytest.param(FailureFacts(output="VERDICT: inconclusive\nThe report was empty.", judgment=VERDICT_FAILED),
                 "Unknown", 0.0, "verdict_inconclusive", id="an-inconclusive-verdict-naming-no-cause"),
    pytest.param(FailureFacts(output="VERDICT: fail\nROOT_CAUSE: coder", judgment={"kind": "llm", "issues": ["vague"]}),
                 "Unknown", 0.0, "no_rule_matched", id="a-verdict-an-llm-judge-rejected-is-not-read"),
    pytest.param(FailureFacts(error="the planner agent failed (rate_limit): 429", error_code="agent_failed",
                              agent_error_kind="rate_limit"),
                 "EnvFailure", ERROR_CAP, "planning_agent_unreachable", id="planning-rate-limited"),
    pytest.param(FailureFacts(error="the agent's manifest is not usable: node 'a' depends on unknown 'b'",
                              error_code="manifest_unusable"),
                 "ContractMismatch", ERROR_CAP, "manifest_unusable", id="planning-bad-manifest"),
    pytest.param(FailureFacts(error="my manifest is not usable, says the agent's own output"),
                 "Unknown", 0.0, "no_rule_matched", id="prose-about-a-manifest-is-no-code"),
    pytest.param(FailureFacts(judgment={"kind": "llm", "issues": ["the PRD contradicts itself on limits"]},
                              output="If the upstream times out, the connection refused page shows."),
                 "Unknown", 0.0, "no_rule_matched", id="an-llm-judges-prose-is-not-read-for-patterns"),
    pytest.param(FailureFacts(agent_error_kind="exit_code", error="agent error (exit_code): exited 1"),
                 "Unknown", 0.0, "no_rule_matched", id="bare-exit-code"),
]


@pytest.mark.parametrize(("facts", "category", "cap", "rule"), CORPUS)
def test_the_corpus_is_classified_as_expected(facts, category, cap, rule):
    classification = failure_classify(facts)
    assert (classification.category, classification.rule) == (category, rule)
    assert classification.confidence == cap
    if category != "Unknown":
        assert classification.evidence, "a category needs evidence"


def test_no_rule_claims_more_than_its_cap_and_none_claims_all_pass():
    caps = {rule.name: rule.cap for rule in FAILURE_RULES}
    assert max(caps.values()) == ASSERTION_CAP
    assert {rule.name for rule in FAILURE_RULES if rule.cap == ASSERTION_CAP} == {
        "assertion_failed", "verdict_blames_code"}
    assert all(rule.category in CATEGORIES for rule in FAILURE_RULES)


def test_a_verdict_is_evidence_in_its_own_words():
    output = ("Reviewed the export.\n\n**VERDICT:** fail\nROOT_CAUSE: coder — the header row is dropped\n\n"
              "`export_csv([])` returns no header.\nThe README promises one.")
    classification = failure_classify(FailureFacts(output=output, judgment=VERDICT_FAILED))
    assert classification.evidence == ["verdict: fail", "root cause: coder — the header row is dropped",
                                       "`export_csv([])` returns no header.", "The README promises one."]
    inconclusive = failure_classify(FailureFacts(output="VERDICT: inconclusive\nNo report came.",
                                                 judgment=VERDICT_FAILED))
    assert inconclusive.evidence == ["verdict: inconclusive", "No report came."]


def test_evidence_quotes_the_line_that_matched_bounded():
    classification = failure_classify(FailureFacts(judgment=command_judgment(1, PYTEST_ASSERTION)))
    assert "matched: E       AssertionError: assert 'id;name' == 'id,name'".split() == \
        classification.evidence[0].split()
    assert "exit code: 1" in classification.evidence
    long = failure_classify(FailureFacts(error="internal error: " + "x" * 5000))
    assert all(len(line) <= 300 for line in long.evidence)


# --- on the attempt -------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_failed_judgment_is_classified_on_its_attempt(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "verdict")] = "VERDICT: fail\nROOT_CAUSE: coder\nThe totals are wrong."
    manifest = {"nodes": [node("verdict", judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"})],
                "edges": []}
    run = planned_run(task, manifest)
    run_start(run=run)
    inline_executor.drain()
    failure = latest(run)["verdict"].failure
    assert failure["category"] == "ProductBug"
    assert failure["confidence"] == ASSERTION_CAP
    assert failure["rule"] == "verdict_blames_code"
    assert failure["evidence"] == ["verdict: fail", "root cause: coder", "The totals are wrong."]


@pytest.mark.django_db
def test_an_agent_error_is_classified_by_its_kind(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "a")] = AgentError("invalid api key", kind="auth")
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    failure = latest(run)["a"].failure
    assert (failure["category"], failure["rule"]) == ("EnvFailure", "agent_unreachable")
    assert failure["evidence"][0] == "agent error kind: auth"


@pytest.mark.django_db
def test_a_command_node_is_classified_from_its_output(commands_allowed, task, inline_executor, scripted_runner):
    code = "import sys; print('E   ModuleNotFoundError: No module named \\'reports\\''); sys.exit(1)"
    run = planned_run(task, {"nodes": [command_node("tests", code)], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    failure = latest(run)["tests"].failure
    assert (failure["category"], failure["rule"]) == ("EnvFailure", "import_error")
    assert "exit code: 1" in failure["evidence"]


@pytest.mark.django_db
def test_succeeded_and_blocked_attempts_carry_no_classification(task, scripted_runner, inline_executor):
    scripted_runner.replies[("judge", "b")] = judge(False, "the summary misses the totals")
    manifest = {"nodes": [node("a"), node("b", "a", judgment={"kind": "llm", "judge_prompt": "{content}"}),
                          node("c", "b")]}
    manifest["edges"] = edges_for(manifest["nodes"])
    run = planned_run(task, manifest)
    run_start(run=run)
    inline_executor.drain()
    rows = latest(run)
    assert (rows["a"].status, rows["a"].failure) == ("succeeded", None)
    assert (rows["c"].status, rows["c"].failure) == ("blocked", None)
    assert rows["b"].failure["category"] == "Unknown"
    assert WorkNodeExecution.objects.filter(run=run, status="failed", failure__isnull=True).count() == 0


@pytest.mark.django_db
def test_a_planning_call_without_a_usable_manifest_is_a_contract_mismatch(task, scripted_runner):
    scripted_runner.replies[("plan", "planner")] = "I would plan it like this: first the PRD, then code."
    with pytest.raises(PlanningFailedError):
        plan_work_graph("planner", task, task.goal_text)
    planning = WorkNodeExecution.objects.get(run__task=task, node_id="__planning__")
    assert planning.status == "failed"
    assert planning.failure["category"] == "ContractMismatch"


@pytest.mark.django_db
def test_an_attempt_its_worker_lost_is_an_environment_failure(task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    long_ago = timezone.now() - timedelta(minutes=10)
    lost = WorkNodeExecution.objects.create(run=run, node_id="a", subagent_type="planner", status="running",
                                            worker="host:3:3", started_at=long_ago, heartbeat_at=long_ago)
    executions_reap(stale_after=timedelta(seconds=30))
    lost.refresh_from_db()
    assert (lost.status, lost.failure["category"], lost.failure["rule"]) == ("failed", "EnvFailure",
                                                                           "infrastructure_lost")
