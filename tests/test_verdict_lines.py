"""The first line that starts with VERDICT: decides, and only an exact pass passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphs.domain.check_registry import check_run
from graphs.domain.mechanical_checks import final_verdict_read, first_root_cause, root_cause_read

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "verdicts" / "corpus.json").read_text())["cases"]


@pytest.mark.parametrize("case", CORPUS, ids=[case["text"][:40] or "(empty)" for case in CORPUS])
def test_verdict_says_pass_on_the_corpus(case):
    assert check_run("verdict_says_pass", case["text"]).ok is case["passes"]


@pytest.mark.parametrize("case", CORPUS, ids=[case["text"][:40] or "(empty)" for case in CORPUS])
def test_the_final_verdict_on_the_corpus(case):
    verdict = final_verdict_read(case["text"])
    assert (verdict.verdict if verdict else None) == case["verdict"]


def test_a_failed_gate_quotes_the_verdict_it_read():
    assert check_run("verdict_says_pass", "**VERDICT:** pass with notes\nfine").issues == [
        "the verdict is 'pass with notes', not pass"
    ]
    assert check_run("verdict_says_pass", "It passes.").issues == [
        "the output has no line that starts with 'VERDICT:'"
    ]


@pytest.mark.parametrize(
    ("text", "category", "detail"),
    [
        ("VERDICT: fail\nROOT_CAUSE: coder — the export drops the header", "coder",
         "the export drops the header"),
        ("VERDICT: fail\n**ROOT_CAUSE:** skill_defect: the skill forbids CSV", "skill_defect", "the skill forbids CSV"),
        ("VERDICT: fail\nroot_cause_category: planning", "planning", ""),
        ("VERDICT: FAIL\nRoot cause category: Planning. The PRD never asked for an export.", "planning",
         "The PRD never asked for an export."),
        ('VERDICT: FAIL\n```json\n{"root_cause_category": "planning",'
         ' "root_cause_detail": "no export in the PRD"}\n```',
         "planning", "no export in the PRD"),
        ("VERDICT: fail\nThe coder's ROOT_CAUSE: planning is a guess.", None, ""),
        ("VERDICT: fail\nROOT_CAUSE: the weather", None, "the weather"),
        ("VERDICT: fail", None, ""),
    ],
)
def test_root_causes_are_read_from_a_line_or_the_seed_field(text, category, detail):
    assert root_cause_read(text) == (category, detail)
    assert first_root_cause(text) == category


def test_the_first_root_cause_line_decides():
    assert first_root_cause("ROOT_CAUSE: planning\nROOT_CAUSE: coder") == "planning"


def test_a_pass_blames_nothing_and_a_fail_keeps_its_line():
    passed = final_verdict_read("VERDICT: pass\nROOT_CAUSE: coder")
    assert (passed.verdict, passed.root_cause) == ("PASS", None)
    failed = final_verdict_read("**VERDICT: FAIL — header missing**\nROOT_CAUSE: coder")
    assert (failed.verdict, failed.line, failed.root_cause) == ("FAIL", "FAIL — header missing", "coder")
