"""Workers SIGKILLed during a 1,000-node run: at random moments, and between an attempt's commit and its landing.

A kill takes a worker's whole process group (the main process, its pool and any git it was running),
as a machine losing power would; a new worker takes its place, with beat when the dead one ran it. The
run must end ``succeeded`` with every node landed once, every log numbered 1…n, and nothing left behind
(tests/reliability/harness.py, ``verdict``).
"""

from __future__ import annotations

import os
import random

import pytest

from graphs.engine import run_start
from tests.reliability.harness import (
    NODES,
    Chaos,
    chaos_manifest,
    run_finished,
    verdict,
    wait_for,
    wait_succeeded,
)
from tests.run_builders import planned_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

KILLS = 3


def _replace_dead(case: Chaos, workers: list) -> None:
    """Once a worker's group is dead, start another in its place (with beat if it ran beat)."""
    wait_for(lambda: any(worker.process.poll() is not None for worker, _ in workers), timeout=60,
             message=lambda: f"no worker died:\n{case.logs()}")
    for index, (worker, beat) in enumerate(workers):
        if worker.process.poll() is not None:
            worker.stop()
            workers[index] = (case.worker("replacement", beat=beat), beat)


def test_workers_killed_at_random_moments(chaos, task):
    seed = int(os.environ.get("CHAOS_SEED") or random.SystemRandom().randrange(10**6))
    print(f"CHAOS_SEED={seed}")
    rng = random.Random(seed)
    case = chaos()
    workers = [(case.worker("first", beat=True), True), (case.worker("second"), False)]
    run = planned_run(task, chaos_manifest())
    run_start(run=run)

    for threshold in sorted(rng.randrange(NODES // 10, NODES * 8 // 10) for _ in range(KILLS)):
        wait_succeeded(run, case, threshold)
        worker, _ = rng.choice(workers)
        worker.kill()
        _replace_dead(case, workers)

    run = run_finished(run, case)
    assert verdict(run, case, fault_words=()) == []


def test_a_worker_killed_between_commit_and_landing_and_before_recording_it(chaos, task):
    # The kill sits in the git command that moves the branch: the git CLI's landing, not libgit2's in-process one.
    case = chaos(extra_env={"WORKGRAPH_GIT_BACKEND": "cli"})
    workers = [(case.worker("first", beat=True), True), (case.worker("second"), False)]
    run = planned_run(task, chaos_manifest())
    run_start(run=run)

    for moment, share in (("before-landing", 4), ("after-landing", 2)):
        wait_succeeded(run, case, NODES // share)
        case.arm(moment)
        wait_for(lambda moment=moment: case.kill_taken(moment), timeout=60,
                 message=lambda moment=moment: f"no landing reached {moment}:\n{case.logs()}")
        _replace_dead(case, workers)

    run = run_finished(run, case)
    assert verdict(run, case, fault_words=()) == []
