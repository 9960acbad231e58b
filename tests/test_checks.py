"""Mechanical checks read agent output the way agents actually write it."""

from __future__ import annotations

import pytest

from graphs.checks import check_run, first_root_cause, first_verdict


@pytest.mark.parametrize(
    "text",
    [
        "VERDICT: pass",
        "I reviewed everything carefully.\n\nVERDICT: PASS\nDetails follow.",
        "**VERDICT: pass**",
        "**VERDICT:** pass",
        "> ## Verdict: passed.",
    ],
)
def test_verdict_says_pass_accepts_a_pass_wherever_it_is(text):
    assert check_run("verdict_says_pass", text).ok


@pytest.mark.parametrize(
    ("text", "issue"),
    [
        ("VERDICT: fail\nVERDICT: pass", "the verdict is 'fail', not pass"),
        ("Looks fine to me.", "the output has no 'VERDICT:' line"),
        ("**VERDICT:** request-revision", "the verdict is 'request-revision', not pass"),
    ],
)
def test_verdict_says_pass_reads_only_the_first_verdict_line(text, issue):
    result = check_run("verdict_says_pass", text)
    assert not result.ok
    assert result.issues == [issue]


def test_check_script_compiles_reads_the_first_fenced_block():
    assert check_run("check_script_compiles", "Here:\n```python\nimport os\nprint(os.sep)\n```\nDone.").ok
    broken = check_run("check_script_compiles", "```python\ndef f(:\n    pass\n```")
    assert not broken.ok and "does not compile" in broken.issues[0]


def test_check_script_compiles_falls_back_to_the_whole_text():
    assert check_run("check_script_compiles", "x = {1: 2}\n").ok
    assert not check_run("check_script_compiles", "   ").ok


def test_an_unknown_check_fails_and_names_the_known_ones():
    result = check_run("check_it_works", "anything")
    assert not result.ok
    assert "unknown mechanical check 'check_it_works'" in result.issues[0]
    assert "verdict_says_pass" in result.issues[0]


def test_root_cause_and_verdict_values_are_extracted():
    text = "Summary.\n**VERDICT:** fail\nROOT_CAUSE: skill_defect — the skill forbids CSV"
    assert first_verdict(text) == "fail"
    assert first_root_cause(text) == "skill_defect"
    assert first_root_cause("VERDICT: pass") is None
