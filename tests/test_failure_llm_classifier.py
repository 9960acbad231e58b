"""A project may have its judge agent classify what the rules leave Unknown; its answer is validated and
capped, and a bad answer falls back to Unknown with the reason recorded."""

from __future__ import annotations

import json

import pytest

from graphs.agents import AgentCall, AgentError
from graphs.domain.failure_judge import failure_answer_validate, failure_prompt
from graphs.domain.failures import FailureFacts
from graphs.engine import run_start
from graphs.logs.store import log_read
from graphs.models import ExecutionLogFile
from tests.run_builders import latest, node, planned_run
from tests.scripted_agents import judge

REVIEW = {"kind": "llm", "judge_prompt": "Review:\n{content}"}
CLASSIFY_MARK = "Classify why one attempt of a work-graph node failed"


def judge_then_classify(classification: str | AgentError):
    """The judge agent: rejects the node's output, then answers the classification request."""
    def reply(call: AgentCall) -> str:
        if CLASSIFY_MARK not in call.prompt:
            return judge(False, "the summary leaves out the March totals")
        if isinstance(classification, AgentError):
            raise classification
        return classification
    return reply


@pytest.fixture
def classifying_project(project):
    project.llm_failure_classifier = True
    project.save()
    return project


def run_one_reviewed_node(task, inline_executor):
    run = planned_run(task, {"nodes": [node("summary", judgment=REVIEW)], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    return latest(run)["summary"]


@pytest.mark.django_db
def test_it_is_off_by_default_and_the_judge_is_not_asked(task, scripted_runner, inline_executor):
    scripted_runner.replies[("judge", "summary")] = judge_then_classify("{}")
    failed = run_one_reviewed_node(task, inline_executor)
    assert failed.failure["category"] == "Unknown"
    assert scripted_runner.node_calls("judge") == [("summary", 1)]


@pytest.mark.django_db
def test_a_valid_answer_is_taken_and_its_confidence_capped(classifying_project, task, scripted_runner,
                                                           inline_executor):
    answer = {"category": "ProductBug", "confidence": 0.95, "evidence": ["the issue says the totals are missing"]}
    scripted_runner.replies[("judge", "summary")] = judge_then_classify("Here:\n" + json.dumps(answer))
    failed = run_one_reviewed_node(task, inline_executor)
    assert failed.failure == {"category": "ProductBug", "confidence": 0.75, "rule": "llm", "note": "",
                              "evidence": ["the issue says the totals are missing"]}
    assert scripted_runner.node_calls("judge") == [("summary", 1), ("summary", 1)]
    lines = log_read(log_file=ExecutionLogFile.objects.get(node_exec=failed))
    logged = [line for line in lines if line["event"] == "failure_classified"]
    assert logged and logged[0]["category"] == "ProductBug"


@pytest.mark.django_db
@pytest.mark.parametrize(("answer", "reason"), [
    ("I think it is a product bug.", "held no JSON object"),
    (json.dumps({"category": "Bug", "confidence": 0.5, "evidence": ["x"]}), "named no known category"),
    (json.dumps({"category": "FlakyTest", "confidence": 0.5, "evidence": ["x"]}), "one failed run cannot show"),
    (json.dumps({"category": "TestBug", "confidence": "high", "evidence": ["x"]}), "not a number from 0 to 1"),
    (json.dumps({"category": "TestBug", "confidence": 0.5, "evidence": "x"}), "not a list of lines"),
    (json.dumps({"category": "TestBug", "confidence": 0.5, "evidence": []}), "gave no evidence"),
    (AgentError("the endpoint is down", kind="unavailable", transient=False), "could not answer (unavailable)"),
])
def test_a_bad_answer_falls_back_to_unknown_with_the_reason(classifying_project, task, scripted_runner,
                                                           inline_executor, answer, reason):
    scripted_runner.replies[("judge", "summary")] = judge_then_classify(answer)
    failed = run_one_reviewed_node(task, inline_executor)
    assert (failed.failure["category"], failed.failure["rule"], failed.failure["confidence"]) == ("Unknown", "llm",
                                                                                                  0.0)
    assert reason in failed.failure["note"]
    assert failed.failure["note"].startswith("fell back to Unknown: ")


@pytest.mark.django_db
def test_what_the_rules_recognise_never_reaches_the_judge(classifying_project, task, scripted_runner,
                                                          inline_executor):
    scripted_runner.replies[("node", "summary")] = AgentError("no route to host", kind="network", transient=False)
    failed = run_one_reviewed_node(task, inline_executor)
    assert failed.failure["rule"] == "agent_unreachable"
    assert scripted_runner.node_calls("judge") == []


@pytest.mark.django_db
def test_with_the_offline_agent_the_judge_answers_no_category_and_that_is_recorded(classifying_project, task,
                                                                                   inline_executor, settings):
    settings.WORKGRAPH_AGENT = "offline"
    # The offline judge rejects a loop_back node's first attempt: the rules cannot place an llm judge's
    # words, so the judge is asked, and its {ok, issues} answer names no category.
    nodes = [node("prd"), node("bench", "prd", judgment=REVIEW, on_fail={"action": "loop_back", "max_attempts": 2})]
    edges = [{"from": "prd", "to": "bench", "edge_type": "needs_judgment"},
             {"from": "bench", "to": "prd", "edge_type": "on_failure"}]
    run = planned_run(task, {"nodes": nodes, "edges": edges})
    run_start(run=run)
    inline_executor.drain()
    first = run.executions.get(node_id="bench", attempt=1)
    assert first.status == "failed"
    assert first.failure["category"] == "Unknown"
    assert "named no known category" in first.failure["note"]


def test_the_prompt_is_bounded_whatever_the_attempt_printed():
    facts = FailureFacts(error="e" * 50_000, output="o" * 500_000,
                         judgment={"kind": "command", "issues": ["i" * 10_000] * 100})
    prompt = failure_prompt(node_id="tests", facts=facts)
    assert len(prompt) < 15_000
    assert "FlakyTest" in prompt and "{content}" not in prompt


def test_an_unknown_answer_is_taken_as_unknown_without_evidence():
    assert failure_answer_validate({"category": "Unknown", "confidence": 0.1, "evidence": []}).note == ""
