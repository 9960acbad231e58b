"""What an experiment costs the console: a dataset of ``CASES`` cases run ``REPETITIONS`` times each with
the offline agent answering every call at once, so what is left of the wall time is the console's.

Run on demand (the normal suite does not collect ``bench_*.py``; ``make bench`` runs them all)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_experiments.py -s -p no:cacheprovider -o python_files='bench_*.py'

Each sitting makes one experiment of the dataset (concurrency 1) and drains its jobs in this thread
(``InlineExecutor``), from ``experiment_create`` until it reads finished: each item a hidden task's
pipeline run (planner → coder → validator, the offline agent's plans) in its own worktree of the demo
project at the case's commit, then scored. The cases have no checks, so scoring is the console's alone.
"Agent" is the time spent inside the offline agent's calls (timed around ``OfflineRunner.run``); the
console's overhead per item is the wall time less the agent's, over the items. The table shows the
median and p95 over ``SITTINGS`` sittings (one: the same figure twice) of the experiment's figures, and
over every item of them of an item's run (its wall time as scoring keeps it), after a warm-up experiment
of one case.
"""

from __future__ import annotations

import statistics
import time

import pytest

from graphs.agents.offline import OfflineRunner
from graphs.experiments.launch import experiment_create
from graphs.models import Dataset, DatasetCase
from graphs.models.experiments import Experiment
from tests.bench.report import load_average, ms, p95, tables
from tests.experiment_cases import demo_repository

CASES = 20
REPETITIONS = 3
# One sitting is 60 pipeline runs, about ten minutes on a busy two-core machine: raise it for the
# experiment's figures over several sittings.
SITTINGS = 1


class AgentClock:
    """The time spent inside the offline agent's calls, and how many there were."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, run):
        def timed(runner, call):
            started = time.perf_counter()
            try:
                return run(runner, call)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1
        return timed


@pytest.mark.django_db(transaction=True)
def test_an_experiment_of_twenty_cases_three_times_each(project, alice, tmp_path, settings, inline_executor,
                                                       monkeypatch):
    settings.WORKGRAPH_AGENT = "offline"
    settings.WORKGRAPH_OFFLINE_LINE_DELAY = 0.0
    settings.WORKGRAPH_OFFLINE_CALL_SECONDS = 0.0
    working, _ = demo_repository(tmp_path / "demo")
    project.target_folder = str(tmp_path / "demo")
    project.save(update_fields=["target_folder"])
    warm_up, dataset = (Dataset.objects.create(project=project, name=name) for name in ("Warm-up", "Bench"))
    DatasetCase.objects.bulk_create(
        DatasetCase(dataset=target, title=f"Case {number}", goal_text="Export the monthly report as CSV.",
                    deliverables=["reports/csv_export.py"], acceptance_criteria=["The export works."],
                    base_commit=working)
        for target, cases in ((warm_up, 1), (dataset, CASES)) for number in range(1, cases + 1))
    clock = AgentClock()
    monkeypatch.setattr(OfflineRunner, "run", clock.wrap(OfflineRunner.run))

    def sitting(of: Dataset, repetitions: int) -> dict[str, float]:
        clock.seconds, clock.calls = 0.0, 0
        started = time.perf_counter()
        experiment = experiment_create(dataset=of, by=alice, fields={
            "name": f"bench {time.time_ns()}", "repetitions": repetitions})
        inline_executor.drain()
        wall = time.perf_counter() - started
        experiment.refresh_from_db()
        items = of.cases.count() * repetitions
        assert experiment.status == Experiment.Status.FINISHED
        assert experiment.items.filter(status="scored", passed=True).count() == items
        runs.extend(experiment.items.values_list("duration_ms", flat=True))
        return {"wall": wall, "agent": clock.seconds, "calls": clock.calls, "items": items,
                "overhead": (wall - clock.seconds) / items}

    runs: list[int] = []
    sitting(warm_up, 1)
    runs.clear()
    measured = [sitting(dataset, REPETITIONS) for _ in range(SITTINGS)]

    def cells(key: str, scale=ms) -> list[str]:
        values = [row[key] for row in measured]
        return [scale(statistics.median(values)), scale(p95(values))]

    calls = statistics.median(row["calls"] for row in measured)
    print(f"\n{CASES} cases x {REPETITIONS} repetitions = {CASES * REPETITIONS} items, offline agent (0 s a call),"
          f" {calls:.0f} agent calls a sitting, {SITTINGS} sittings; load average {load_average()}\n")
    print(tables(["figure", "p50", "p95"], [
        ["wall time of the experiment (s)", *cells("wall", lambda value: f"{value:,.1f}")],
        ["inside the agent (s)", *cells("agent", lambda value: f"{value:,.2f}")],
        ["console's overhead per item (ms)", *cells("overhead")],
        ["an item's run, wall time (ms)", f"{statistics.median(runs):,.0f}", f"{p95(runs):,.0f}"],
    ]))
