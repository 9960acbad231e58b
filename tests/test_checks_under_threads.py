"""``check_script_compiles`` judges in many threads at once, as the embedded mode's executor runs it, and
says a script that no compiler takes (null bytes, nesting past the compiler's depth) does not compile,
never raising.

The threads' garbage has finalizers that give up the interpreter, so a thread switch can land inside one
judgment's compilation while another's runs: where CPython 3.11 keeps one count for building ast objects,
parsing to them fails there with "AST constructor recursion depth mismatch".
"""

from __future__ import annotations

import threading
import time

from graphs.domain.check_registry import check_run

SCRIPT = "\n".join(f"def step_{i}(rows):\n    return [row * {i} for row in rows if row % 2]\n" for i in range(300))
THREADS = 8
JUDGMENTS_A_THREAD = 60


class _YieldsWhenCollected:
    """A reference cycle whose collection runs Python code that lets another thread take the interpreter."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        time.sleep(0)


def test_judgments_in_eight_threads_at_once_all_pass():
    verdicts: list[bool] = []
    errors: list[BaseException] = []

    def judge() -> None:
        for _ in range(JUDGMENTS_A_THREAD):
            for _ in range(50):
                _YieldsWhenCollected()
            try:
                verdicts.append(check_run("check_script_compiles", SCRIPT).ok)
            except Exception as error:  # the assertion below names it
                errors.append(error)

    threads = [threading.Thread(target=judge) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert verdicts == [True] * THREADS * JUDGMENTS_A_THREAD


def test_a_script_with_a_null_byte_does_not_compile():
    result = check_run("check_script_compiles", "print('a')\x00\n")
    assert not result.ok
    assert result.issues[0].startswith("the script does not compile")


def test_a_script_nested_past_the_compilers_depth_does_not_compile():
    result = check_run("check_script_compiles", "x = " + "-" * 200_000 + "1\n")
    assert not result.ok
    assert result.issues[0].startswith("the script does not compile")
