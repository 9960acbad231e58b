"""``make flake``: the tests most exposed to timing — the browser tests and the services tests (real
Celery workers, PostgreSQL, Redis, daphnes) — run again and again with every core loaded, each failure
printed with its first line.

A test that fails once here is a defect to fix at its cause (wait on the condition the test means, never
on time), not a rerun. The load is Debian's ``stress-ng`` (``--cpu`` workers, one per core by default),
started before the first run and stopped after the last; ``--load 0`` runs on a quiet machine. Exits 1
when any run had a failure::

    make flake FLAKE_RUNS=3
    .venv/bin/python tests/flake.py --runs 3 --load 2 [pytest arguments, e.g. tests/browser/test_x.py]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The browser tests, then the services tests (those marked `services`) outside them.
SELECTIONS = (
    ["tests/browser"],
    ["tests", "--ignore=tests/browser", "--ignore=tests/bench", "-m", "services"],
)
# stress-ng stops by itself after this long even if this script is killed.
STRESS_LIMIT_SECONDS = 4 * 3600


@dataclass(frozen=True)
class Outcome:
    passed: int
    failures: list[tuple[str, str]]  # (test id, first line of its message)


def junit_read(path: Path) -> Outcome:
    """The passed count and each failure or error of a JUnit report pytest wrote."""
    if not path.exists():
        return Outcome(passed=0, failures=[("(no report)", "pytest wrote no report: it did not run")])
    passed, failures = 0, []
    for case in ET.parse(path).getroot().iter("testcase"):
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        if problem is None:
            passed += case.find("skipped") is None
            continue
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        message = (problem.get("message") or problem.text or "").strip().splitlines()
        failures.append((name, message[0][:300] if message else ""))
    return Outcome(passed=passed, failures=failures)


def stress_start(cpus: int) -> subprocess.Popen | None:
    if cpus <= 0:
        return None
    if shutil.which("stress-ng") is None:
        sys.exit("make flake loads the machine with Debian's stress-ng: apt-get install stress-ng")
    return subprocess.Popen(
        ["stress-ng", "--cpu", str(cpus), "--timeout", f"{STRESS_LIMIT_SECONDS}s", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def pytest_run(arguments: list[str], *, report: Path, processes: int) -> Outcome:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(processes),
               "--dist", "loadfile", f"--junitxml={report}", *arguments]
    subprocess.run(command, cwd=ROOT, check=False)
    return junit_read(report)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2, help="stress-ng CPU workers (0: none)")
    parser.add_argument("--processes", type=int, default=2, help="pytest-xdist processes, as make test uses")
    args, selection = parser.parse_known_args(argv)
    selections = [selection] if selection else list(SELECTIONS)
    stress = stress_start(args.load)
    rows: list[tuple[int, Outcome, float]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="flake-") as scratch:
            for run in range(1, args.runs + 1):
                started = time.monotonic()
                passed, failures = 0, []
                for number, chosen in enumerate(selections):
                    outcome = pytest_run(chosen, report=Path(scratch) / f"run{run}-{number}.xml",
                                         processes=args.processes)
                    passed += outcome.passed
                    failures += outcome.failures
                rows.append((run, Outcome(passed=passed, failures=failures), time.monotonic() - started))
                for name, message in failures:
                    print(f"run {run}: FAILED {name}: {message}", flush=True)
    finally:
        if stress is not None:
            stress.terminate()
            stress.wait()
    print(f"\n| run | passed | failed | minutes |  (load: {args.load} stress-ng CPU workers)")
    print("|---|---|---|---|")
    for run, outcome, seconds in rows:
        print(f"| {run} | {outcome.passed} | {len(outcome.failures)} | {seconds / 60:.1f} |")
    failed = sum(len(outcome.failures) for _, outcome, _ in rows)
    print(f"\n{failed} failure{'s' if failed != 1 else ''} in {len(rows)} run{'s' if len(rows) != 1 else ''}.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
