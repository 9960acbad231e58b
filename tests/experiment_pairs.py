"""Two experiments of one dataset, scored without running anything: each item's run a hidden task's run of
its own, as an experiment's are, so the pages' figures, flips and links can be read at any size."""

from __future__ import annotations

from decimal import Decimal

from graphs.models import Dataset, DatasetCase, Project
from graphs.models.experiments import Experiment, ExperimentItem
from tests import factories

# Each case's outcome in the first experiment and in the second: the second case goes pass → fail, the
# third fail → pass, the first passes in both and the fourth fails in both.
OUTCOMES = [(True, True), (True, False), (False, True), (False, False)]


def experiment_pair(project: Project, *, outcomes: list[tuple[bool, bool]] = OUTCOMES,
                    repetitions: int = 1) -> tuple[Experiment, Experiment]:
    """A dataset of ``project`` with a case per pair of ``outcomes``, and an experiment scoring each case
    the pair's first way and one the second way, ``repetitions`` times each."""
    dataset = Dataset.objects.create(project=project, name="Exports")
    cases = [DatasetCase.objects.create(dataset=dataset, title=f"Export case {number}", goal_text="Export it.",
                                        base_commit="0" * 40)
             for number in range(1, len(outcomes) + 1)]
    pair = []
    for side, name in enumerate(("Skill revision 1", "Skill revision 2")):
        experiment = Experiment.objects.create(project=project, dataset=dataset, name=name, repetitions=repetitions,
                                               status=Experiment.Status.FINISHED, pins={"skills": {"export": side + 1}})
        for case, outcome in zip(cases, outcomes, strict=True):
            for repetition in range(1, repetitions + 1):
                scored(experiment, case, repetition=repetition, passed=outcome[side],
                       cost=Decimal("0.0100") * (side + 1), duration_ms=1000 * (side + 1))
        pair.append(experiment)
    return pair[0], pair[1]


def scored(experiment: Experiment, case: DatasetCase, *, repetition: int, passed: bool, cost: Decimal,
           duration_ms: int) -> ExperimentItem:
    task = factories.TaskFactory(project=experiment.project, title=case.title, hidden=True)
    run = factories.RunFactory(task=task, status="succeeded" if passed else "failed")
    return ExperimentItem.objects.create(
        experiment=experiment, case=case, repetition=repetition, task=task, run=run,
        status=ExperimentItem.Status.SCORED, passed=passed, cost_usd=cost, input_tokens=1200, output_tokens=300,
        duration_ms=duration_ms, loop_backs=0 if passed else 1, retries=0)
