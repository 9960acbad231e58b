"""A judgment and a failure classification read in words: verdict, judge and issues; the category said
plainly, with its confidence in words; the technical facts apart. The side panel's JSON carries the same
readings as the node page."""

from __future__ import annotations

import pytest

from graphs.domain.failures import CATEGORIES
from graphs.domain.judgment_words import CATEGORY_WORDS, confidence_words, failure_reading, judgment_reading
from tests import factories
from tests.clients import signed_in
from tests.run_builders import node, planned_run


def test_every_category_reads_in_words():
    assert set(CATEGORY_WORDS) == set(CATEGORIES)
    assert CATEGORY_WORDS["TestBug"] == "the test itself is broken"
    assert CATEGORY_WORDS["ContractMismatch"] == "the output does not match the contract"


@pytest.mark.parametrize(("confidence", "words"), [
    (0.0, "a guess: nothing recognised it (confidence 0.00)"),
    (0.3, "possible (confidence 0.30)"),
    (0.6, "likely (confidence 0.60)"),
    (0.75, "very likely (confidence 0.75)"),
    (1.0, "certain (confidence 1.00)"),
])
def test_a_confidence_reads_in_words_with_its_number(confidence, words):
    assert confidence_words(confidence) == words


def test_a_failure_reads_as_its_category_in_words_and_names_the_rule_apart():
    reading = failure_reading({"category": "EnvFailure", "confidence": 0.6, "evidence": ["agent error kind: timeout"],
                               "rule": "agent_unreachable", "note": ""})
    assert reading == {"category": "EnvFailure", "words": "the environment failed, not the work",
                       "confidence_text": "likely (confidence 0.60)", "evidence": ["agent error kind: timeout"],
                       "note": "", "decided_by": "rule agent_unreachable"}
    assert failure_reading({"category": "Unknown", "confidence": 0.3, "rule": "llm"})["decided_by"] == "the judge agent"


def test_a_node_without_a_judgment_reads_as_judged_by_no_one():
    reading = judgment_reading({"ok": True, "kind": "none", "issues": []})
    assert (reading["verdict"], f"judged by {reading['judged_by']}") == (
        "pass", "judged by no one: the node asks for no judgment")


def test_no_failure_and_an_unknown_category_read_as_none():
    assert failure_reading(None) is None
    assert failure_reading({"category": "Gremlins", "confidence": 1}) is None


def test_a_judgment_reads_as_a_verdict_its_judge_its_issues_and_its_other_facts():
    reading = judgment_reading({"ok": False, "kind": "command", "issues": ["2 failed", " "], "exit_code": 1,
                                "command": ["pytest", "-q"], "timed_out": False})
    assert reading == {"verdict": "fail", "kind": "command", "judged_by": "a command's exit code",
                       "issues": ["2 failed"],
                       "facts": [["exit_code", "1"], ["command", "pytest -q"], ["timed_out", "False"]]}
    assert judgment_reading({"ok": True, "kind": "none", "issues": []})["verdict"] == "pass"
    assert judgment_reading({"ok": True, "kind": "brand_new"})["judged_by"] == "brand new"
    assert judgment_reading(None) is None


@pytest.mark.django_db
def test_the_side_panel_json_carries_the_readings_of_the_attempt_and_each_attempt(alice, task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="failed")
    attempt = factories.ExecutionFactory(
        run=run, node_id="a", status="failed", worker="host:1",
        judgment_result={"ok": False, "kind": "llm", "issues": ["too short"]},
        failure={"category": "TestBug", "confidence": 0.6, "evidence": [], "rule": "x", "note": ""},
    )
    detail = signed_in(alice).get(f"/executions/{attempt.pk}/detail.json").json()
    assert detail["judgment_reading"]["verdict"] == "fail"
    assert detail["failure_reading"]["words"] == "the test itself is broken"
    assert detail["worker"] == "host:1"
    assert detail["attempts"][0]["judgment_reading"]["issues"] == ["too short"]
    assert detail["attempts"][0]["failure_reading"]["category"] == "TestBug"
