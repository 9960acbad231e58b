"""Mechanical checks read agent output the way agents actually write it."""

from __future__ import annotations

from graphs.domain.check_registry import check_run


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


