"""The gate a revision clears before it is labelled ``production``, and the label moved through it.

A project sets its gate (``promotion_min_pass_rate``, ``promotion_no_regressions``). A move to
``production`` names the experiment that measured the revision, and is refused with every reason it does not
clear, unless a skill admin forces it — the move then lands on the audit log with the reasons overridden.
A move to another label (``staging``) is no promotion: it needs no experiment and no gate.

The regressions compared are against the current production revision's latest finished experiment on the
same dataset (one that pinned that very revision): a case that passed there and fails here is a reason.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import models

from graphs.domain.revisions import RUN_LABEL
from graphs.experiments.aggregates import case_outcomes, experiment_aggregate, experiment_items
from graphs.models import AgentProfile, Skill
from graphs.models.experiments import Experiment
from graphs.profiles.revisions import profile_label_move
from graphs.revisions import revision_for_runs, revision_pinned
from graphs.skills.revisions import skill_label_move


class GateNotMet(Exception):
    """The move does not clear the gate: each reason in words."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__(" ".join(reasons))
        self.reasons = reasons


def label_move_gated(*, record: Skill | AgentProfile, label: str, number: int, experiment: Experiment | None,
                     force: bool, by: AbstractBaseUser | None) -> dict[str, Any]:
    """Give ``label`` to revision ``number`` of ``record`` (a skill, or the console's agent profile), when
    ``experiment`` clears the gate of its project or ``force`` overrides it. Raises ``GateNotMet`` with every
    reason otherwise, ``RevisionUnknown`` for a revision the record does not have. Returns what the audit
    log records beside the move: the experiment, and the reasons overridden."""
    revision_pinned(record=record, ref=number)
    reasons = gate_reasons(record=record, label=label, number=number, experiment=experiment)
    if reasons and not force:
        raise GateNotMet(reasons)
    details: dict[str, Any] = {"experiment": experiment.pk if experiment is not None else None}
    if reasons:
        details.update(forced=True, overridden=reasons)
    if isinstance(record, Skill):
        skill_label_move(skill=record, label=label, number=number, by=by, details=details)
    else:
        profile_label_move(profile=record, label=label, number=number, by=by, details=details)
    return details


def gate_reasons(*, record: Skill | AgentProfile, label: str, number: int, experiment: Experiment | None) -> list[str]:
    """Why moving ``label`` to revision ``number`` of ``record`` on the strength of ``experiment`` does not clear
    the gate; empty when it does (or ``label`` is no promotion)."""
    if label != RUN_LABEL:
        return []
    if experiment is None:
        return ["Name the experiment that measured the revision: production takes a measured revision."]
    kind, key = _pin_of(record)
    reasons = []
    pinned = (experiment.pins.get(kind) or {}).get(key)
    if pinned != number:
        ran = f"revision {pinned}" if pinned is not None else "no pinned revision"
        reasons.append(f"Experiment {experiment.pk} ran {ran} of {key}, not revision {number}.")
    if not experiment.is_finished() or experiment.status != Experiment.Status.FINISHED:
        reasons.append(f"Experiment {experiment.pk} is {experiment.get_status_display().lower()}: only an"
                       " experiment that scored every item measures a revision.")
    project = experiment.project
    items = experiment_items(experiment)
    minimum = project.promotion_min_pass_rate
    rate = experiment_aggregate(items).pass_rate
    if minimum is not None and (rate is None or rate < minimum):
        shown = f"{rate:.0%}" if rate is not None else "no score"
        reasons.append(f"Its pass rate is {shown}; the project {project.slug} requires at least {minimum:.0%}.")
    if project.promotion_no_regressions:
        reasons.extend(_regressions(record=record, experiment=experiment, outcomes=case_outcomes(items)))
    return reasons


def _regressions(*, record: models.Model, experiment: Experiment, outcomes: dict[int, bool]) -> list[str]:
    production = revision_for_runs(record)
    if production is None:
        return []
    kind, key = _pin_of(record)
    baseline = next((
        other for other in Experiment.objects.filter(
            dataset=experiment.dataset, status=Experiment.Status.FINISHED).exclude(pk=experiment.pk)
        .order_by("-finished_at", "-pk")
        if (other.pins.get(kind) or {}).get(key) == production.number), None)
    if baseline is None:
        return []
    before = case_outcomes(experiment_items(baseline))
    return [f"Case {case_id} passed under revision {production.number} (experiment {baseline.pk}) and fails"
            f" under experiment {experiment.pk}."
            for case_id, passed in sorted(before.items()) if passed and outcomes.get(case_id) is False]


def _pin_of(record: models.Model) -> tuple[str, str]:
    return ("skills", record.skill_id) if isinstance(record, Skill) else ("profiles", record.org_node)
