"""An attempt's cause and failure read as what happened, the same on every page."""

from __future__ import annotations

import pytest

from graphs.domain.attempt_words import REASON_MAX_CHARS, attempt_cause_text, attempt_failure_reason


@pytest.mark.parametrize(
    ("cause", "cause_node_id", "words"),
    [
        ("initial", "", "first attempt"),
        ("loop_back", "benchmark", "rerun: benchmark failed its judgment"),
        ("dynamic_loop_back", "verdict", "rerun: the verdict of verdict sent the run back"),
        ("retry_self", "", "retry: its judgment failed"),
        ("transient_retry", "", "retry after a transient error"),
        ("fork", "", "rerun in a fork"),
        ("something_new", "", "something new"),
    ],
)
def test_causes_read_as_what_happened(cause, cause_node_id, words):
    assert attempt_cause_text(cause, cause_node_id) == words


def test_a_failed_judgment_gives_its_issues_before_the_error():
    judgment = {"ok": False, "kind": "llm", "issues": ["the export has no header", " "]}
    reason = attempt_failure_reason(status="failed", error="judgment failed: …", judgment_result=judgment)
    assert reason == "the export has no header"


def test_an_agent_error_gives_the_error():
    reason = attempt_failure_reason(status="failed", error="timeout: no answer in 600 s", judgment_result=None)
    assert reason == "timeout: no answer in 600 s"


def test_only_failed_attempts_have_a_reason_and_a_long_one_is_cut():
    assert attempt_failure_reason(status="succeeded", error="", judgment_result={"ok": True}) == ""
    long = attempt_failure_reason(status="failed", error="x" * 1000, judgment_result=None)
    assert len(long) == REASON_MAX_CHARS and long.endswith("…")
    assert attempt_failure_reason(status="failed", error="", judgment_result=None) == (
        "failed without a recorded reason"
    )
