"""What an experiment measured, and two experiments side by side.

The pass rate is over the scored items (an item not run for a cancel or a budget counts neither way), with
its 95 % Wilson score interval, which stays inside 0 to 1 and means something for the few runs an experiment
has. Tokens, loop-backs and retries are totals over the scored items. A case's outcome over its repetitions
is a pass when more than half of its scored repetitions passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from statistics import median
from typing import Any

from graphs.models.experiments import Experiment, ExperimentItem

# The normal quantile of a two-sided 95 % interval.
Z_95 = 1.959963984540054
# What an aggregate totals over its scored items beside their cost.
COUNTED = ("input_tokens", "output_tokens", "loop_backs", "retries")
# The figures two experiments' differences are given for: b's minus a's.
DIFFERENCES = ("pass_rate", "total_cost_usd", "median_cost_usd", "median_duration_ms", *COUNTED)


@dataclass(frozen=True)
class Aggregate:
    items: int
    scored: int
    passed: int
    pass_rate: float | None
    pass_rate_low: float | None
    pass_rate_high: float | None
    total_cost_usd: Decimal
    median_cost_usd: Decimal | None
    median_duration_ms: float | None
    input_tokens: int
    output_tokens: int
    loop_backs: int
    retries: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def wilson_interval(passed: int, total: int, *, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval of ``passed`` successes in ``total`` trials; None for no trials."""
    if total == 0:
        return None
    rate = passed / total
    denominator = 1 + z * z / total
    centre = (rate + z * z / (2 * total)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def experiment_items(experiment: Experiment) -> list[ExperimentItem]:
    """Its items with their cases and runs, in the cases' order, in one query."""
    return list(experiment.items.select_related("case", "run").order_by("case_id", "repetition"))


def experiment_aggregate(items: list[ExperimentItem]) -> Aggregate:
    """The aggregate of an experiment's ``items``."""
    scored = [item for item in items if item.status == ExperimentItem.Status.SCORED]
    passed = sum(1 for item in scored if item.passed)
    interval = wilson_interval(passed, len(scored))
    costs = [item.cost_usd for item in scored]
    durations = [item.duration_ms for item in scored if item.duration_ms is not None]
    return Aggregate(
        items=len(items), scored=len(scored), passed=passed,
        pass_rate=passed / len(scored) if scored else None,
        pass_rate_low=interval[0] if interval else None, pass_rate_high=interval[1] if interval else None,
        total_cost_usd=sum(costs, Decimal(0)), median_cost_usd=median(costs) if costs else None,
        median_duration_ms=median(durations) if durations else None,
        **{name: sum(getattr(item, name) for item in scored) for name in COUNTED},
    )


def case_outcomes(items: list[ExperimentItem]) -> dict[int, bool]:
    """Each case with a scored repetition, and whether it passed: more than half its scored repetitions did."""
    counts: dict[int, list[int]] = {}
    for item in items:
        if item.status == ExperimentItem.Status.SCORED:
            tally = counts.setdefault(item.case_id, [0, 0])
            tally[0] += bool(item.passed)
            tally[1] += 1
    return {case_id: passed * 2 > total for case_id, (passed, total) in counts.items()}


def experiments_compare(a: Experiment, b: Experiment) -> dict[str, Any]:
    """``a`` and ``b`` side by side: their aggregates, ``b``'s minus ``a``'s, and each case whose outcome
    flipped — pass → fail first — with the latest run of the case in each."""
    items_a, items_b = experiment_items(a), experiment_items(b)
    aggregate_a, aggregate_b = experiment_aggregate(items_a), experiment_aggregate(items_b)
    outcomes_a, outcomes_b = case_outcomes(items_a), case_outcomes(items_b)
    runs_a, runs_b = _run_of_case(items_a), _run_of_case(items_b)
    titles = {item.case_id: item.case.title for item in [*items_a, *items_b]}
    flipped = [
        {"case": case_id, "title": titles[case_id], "a_passed": outcomes_a[case_id], "b_passed": outcomes_b[case_id],
         "a_run": runs_a.get(case_id), "b_run": runs_b.get(case_id)}
        for case_id in sorted(set(outcomes_a) & set(outcomes_b)) if outcomes_a[case_id] != outcomes_b[case_id]
    ]
    flipped.sort(key=lambda row: (not row["a_passed"], row["case"]))
    return {"a": aggregate_a.as_dict(), "b": aggregate_b.as_dict(),
            "differences": _differences(aggregate_a, aggregate_b), "flipped": flipped,
            "same_dataset": a.dataset_id == b.dataset_id}


def _differences(a: Aggregate, b: Aggregate) -> dict[str, Any]:
    def minus(name: str) -> Any:
        first, second = getattr(a, name), getattr(b, name)
        return None if first is None or second is None else second - first

    return {name: minus(name) for name in DIFFERENCES}


def _run_of_case(items: list[ExperimentItem]) -> dict[int, Any]:
    """Each case's run to open from a comparison: its last scored repetition's."""
    runs: dict[int, Any] = {}
    for item in items:
        if item.status == ExperimentItem.Status.SCORED and item.run_id is not None:
            runs[item.case_id] = item.run_id
    return runs
