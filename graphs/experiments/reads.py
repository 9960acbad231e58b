"""Experiments as the pages read them: one with its items and its aggregate in words, the others of its
dataset to compare it with, each dataset's experiments, and two experiments side by side with their
differences — every figure worded here, so a page shows what the API's numbers say."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Prefetch, QuerySet

from graphs.domain.duration_words import duration_text
from graphs.domain.money_words import usd_text
from graphs.experiments.aggregates import Aggregate, experiment_aggregate, experiment_items, experiments_compare
from graphs.models import Dataset
from graphs.models.experiments import Experiment, ExperimentItem

NONE = "—"


@dataclass(frozen=True)
class Figure:
    """One figure of an aggregate: ``key`` names it for tests and styles, ``label`` for people."""

    key: str
    label: str
    text: str


@dataclass(frozen=True)
class FigurePair:
    """One figure of two experiments, and ``b``'s minus ``a``'s in words (``NONE`` when either is unknown)."""

    key: str
    label: str
    a: str
    b: str
    difference: str


@dataclass(frozen=True)
class ItemRow:
    """An item with its score's figures in words."""

    item: ExperimentItem
    cost: str
    tokens: str
    time: str


@dataclass(frozen=True)
class ExperimentPage:
    experiment: Experiment
    items: list[ItemRow]
    figures: list[Figure]
    others: list[Experiment]
    budget: str


@dataclass(frozen=True)
class ComparisonPage:
    figures: list[FigurePair]
    flipped: list[dict[str, Any]]
    same_dataset: bool


def experiment_read(experiment_id: object) -> Experiment | None:
    """The experiment with that id, with what its pages show of its project, dataset and maker."""
    return Experiment.objects.select_related("project", "dataset", "created_by").filter(pk=experiment_id).first()


def experiment_page(experiment: Experiment) -> ExperimentPage:
    """``experiment``'s page: its items with their cases and runs, its aggregate, and the other experiments of
    its dataset, newest first. Two queries."""
    items = experiment_items(experiment)
    others = list(Experiment.objects.filter(dataset_id=experiment.dataset_id).exclude(pk=experiment.pk)
                  .only("pk", "name", "status", "created_at").order_by("-created_at"))
    rows = [ItemRow(item=item, cost=usd_text(item.cost_usd),
                    tokens=f"{_count_text(item.input_tokens)} / {_count_text(item.output_tokens)}",
                    time=_milliseconds_text(item.duration_ms)) for item in items]
    budget = usd_text(experiment.max_cost_usd) if experiment.max_cost_usd is not None else "none"
    return ExperimentPage(experiment=experiment, items=rows, figures=aggregate_figures(experiment_aggregate(items)),
                          others=others, budget=budget)


def comparison_page(a: Experiment, b: Experiment) -> ComparisonPage:
    """``a`` and ``b`` side by side in words, and the cases whose outcome flipped (pass → fail first)."""
    comparison = experiments_compare(a, b)
    first, second, differences = comparison["a"], comparison["b"], comparison["differences"]
    figures = [FigurePair(key=key, label=label, a=word(first), b=word(second),
                          difference=_difference_text(key, differences.get(key)))
               for key, label, word in _FIGURES]
    return ComparisonPage(figures=figures, flipped=comparison["flipped"], same_dataset=comparison["same_dataset"])


def aggregate_figures(aggregate: Aggregate) -> list[Figure]:
    """``aggregate``'s figures in words, in the order the pages show them."""
    values = aggregate.as_dict()
    return [Figure(key=key, label=label, text=word(values)) for key, label, word in _FIGURES]


def datasets_with_experiments(datasets: QuerySet[Dataset]) -> QuerySet[Dataset]:
    """``datasets`` with each one's experiments prefetched, newest first: one query more."""
    return datasets.prefetch_related(Prefetch(
        "experiments", queryset=Experiment.objects.only("pk", "name", "status", "dataset_id", "created_at")
        .order_by("-created_at")))


def percent_text(rate: float | None) -> str:
    return NONE if rate is None else f"{rate * 100:.1f} %"


def _pass_rate_text(values: dict[str, Any]) -> str:
    if values["pass_rate"] is None:
        return "no item scored"
    return (f"{percent_text(values['pass_rate'])} ({values['passed']} of {values['scored']}; 95 % interval"
            f" {percent_text(values['pass_rate_low'])} to {percent_text(values['pass_rate_high'])})")


def _milliseconds_text(value: float | None) -> str:
    return NONE if value is None else duration_text(timedelta(milliseconds=value))


def _count_text(value: int) -> str:
    return f"{value:,}"


_FIGURES = [
    ("pass_rate", "Pass rate", _pass_rate_text),
    ("total_cost_usd", "Total cost", lambda values: usd_text(values["total_cost_usd"])),
    ("median_cost_usd", "Median cost", lambda values: usd_text(values["median_cost_usd"])),
    ("median_duration_ms", "Median time", lambda values: _milliseconds_text(values["median_duration_ms"])),
    ("input_tokens", "Input tokens", lambda values: _count_text(values["input_tokens"])),
    ("output_tokens", "Output tokens", lambda values: _count_text(values["output_tokens"])),
    ("loop_backs", "Loop-backs", lambda values: _count_text(values["loop_backs"])),
    ("retries", "Retries", lambda values: _count_text(values["retries"])),
]


def _difference_text(key: str, difference: Any) -> str:
    """``difference`` (b's minus a's) in the words of its figure, signed; ``same`` for none."""
    if difference is None:
        return NONE
    if difference == 0:
        return "same"
    sign = "+" if difference > 0 else "\N{MINUS SIGN}"
    size = abs(difference)
    if key == "pass_rate":
        return f"{sign}{size * 100:.1f} points"
    if key in ("total_cost_usd", "median_cost_usd"):
        return f"{sign}{usd_text(Decimal(size))}"
    if key == "median_duration_ms":
        return f"{sign}{_milliseconds_text(size)}"
    return f"{sign}{_count_text(size)}"

