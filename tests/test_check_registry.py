"""The mechanical checks a manifest may name are one mapping, built in graphs.domain.check_registry from
the modules that define them: which checks exist never depends on what else was imported."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

from graphs.domain import case_manifests, mechanical_checks
from graphs.domain.check_registry import MECHANICAL_CHECKS
from graphs.domain.mechanical_checks import CheckResult

ROOT = Path(__file__).resolve().parent.parent


def _public_checks(module) -> set[str]:
    """The module's own public functions that return a ``CheckResult``: its mechanical checks."""
    return {name for name, function in inspect.getmembers(module, inspect.isfunction)
            if function.__module__ == module.__name__ and not name.startswith("_")
            and inspect.signature(function).return_annotation in (CheckResult, "CheckResult")}


def test_every_check_function_of_both_modules_is_in_the_registry():
    defined = _public_checks(mechanical_checks) | _public_checks(case_manifests)

    assert defined == {"check_script_compiles", "verdict_says_pass", "output_not_empty", "test_case_manifest_valid"}
    assert set(MECHANICAL_CHECKS) == defined
    assert {name: check.run.__name__ for name, check in MECHANICAL_CHECKS.items()} == {name: name for name in defined}


def test_importing_the_registry_alone_gives_every_check():
    code = "from graphs.domain.check_registry import MECHANICAL_CHECKS; print(' '.join(sorted(MECHANICAL_CHECKS)))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == sorted(["check_script_compiles", "output_not_empty", "test_case_manifest_valid",
                                            "verdict_says_pass"])

