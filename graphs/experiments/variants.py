"""An experiment as it is asked for, checked whole: every problem named at once, by its field, before
anything is saved; the variant's revisions resolved to numbers, so the experiment measures the revisions
named when it was made, whatever the labels do later."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from graphs.agents import get_runner
from graphs.domain.revisions import RevisionUnknown
from graphs.models import AgentProfile, Dataset, Skill
from graphs.models.experiments import MAX_REPETITIONS
from graphs.profiles.resolve import profile_console
from graphs.revisions import revision_pinned

# More runs at once than this would take every worker of a small deployment from the teams' own tasks.
MAX_CONCURRENCY = 20
NAME_MAX_CHARS = 200
VARIANT_KEYS = ("skills", "profiles", "agent", "model")


class ExperimentInvalid(Exception):
    """What is wrong with an experiment asked for: each field named with what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems.items()))
        self.problems = problems


def experiment_fields_check(*, dataset: Dataset, fields: dict[str, Any]) -> dict[str, Any]:
    """The experiment's values as saved (``name``, ``variant``, ``pins``, ``repetitions``, ``concurrency``,
    ``max_cost_usd``) from ``fields`` as asked; raises ``ExperimentInvalid`` naming every problem."""
    problems: dict[str, str] = {}
    name = str(fields.get("name") or "").strip()
    if not name:
        problems["name"] = "Give the experiment a name."
    elif len(name) > NAME_MAX_CHARS:
        problems["name"] = f"At most {NAME_MAX_CHARS} characters."
    repetitions = _whole(fields.get("repetitions", 1), low=1, high=MAX_REPETITIONS, field="repetitions",
                         problems=problems)
    concurrency = _whole(fields.get("concurrency", 1), low=1, high=MAX_CONCURRENCY, field="concurrency",
                         problems=problems)
    budget = _budget(fields.get("max_cost_usd"), problems)
    cases = list(dataset.cases.values_list("checks", flat=True))
    if not cases:
        problems["dataset"] = "The dataset has no cases yet: add some before running an experiment on it."
    elif any(cases) and not dataset.project.allow_commands:
        problems["dataset"] = ("Its cases have checks, which run as commands, and the project does not allow"
                               " commands.")
    variant = fields.get("variant") or {}
    pins = _pins(variant, problems) if isinstance(variant, dict) else {}
    if not isinstance(variant, dict):
        problems["variant"] = "An object with skills, profiles, agent and model, each optional."
    if problems:
        raise ExperimentInvalid(problems)
    return {"name": name, "variant": variant, "pins": pins, "repetitions": repetitions, "concurrency": concurrency,
            "max_cost_usd": budget}


def _whole(value: Any, *, low: int, high: int, field: str, problems: dict[str, str]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        problems[field] = f"A whole number from {low} to {high}."
        return low
    return value


def _budget(value: Any, problems: dict[str, str]) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        budget = Decimal(str(value))
    except InvalidOperation:
        budget = Decimal(0)
    if isinstance(value, bool) or not budget.is_finite() or budget <= 0:
        problems["max_cost_usd"] = "An amount in USD greater than 0, or empty for no budget."
        return None
    return budget


def _pins(variant: dict[str, Any], problems: dict[str, str]) -> dict[str, Any]:
    pins: dict[str, Any] = {}
    unknown = sorted(set(variant) - set(VARIANT_KEYS))
    if unknown:
        problems["variant"] = f"Unknown keys {', '.join(unknown)}: a variant names {', '.join(VARIANT_KEYS)}."
    for kind, lookup in (("skills", _skill), ("profiles", _profile)):
        named = variant.get(kind) or {}
        if not isinstance(named, dict):
            problems[f"variant.{kind}"] = "An object of each one's id and a revision number or label."
            continue
        for key, ref in named.items():
            try:
                record = lookup(str(key))
                pins.setdefault(kind, {})[str(key)] = revision_pinned(record=record, ref=ref).number
            except (RevisionUnknown, LookupError) as error:
                problems[f"variant.{kind}.{key}"] = str(error)
    agent = variant.get("agent")
    if agent:
        try:
            get_runner(str(agent))
            pins["agent"] = str(agent)
        except ImproperlyConfigured as error:
            problems["variant.agent"] = str(error)
    model = variant.get("model")
    if model:
        if not isinstance(model, str) or len(model) > NAME_MAX_CHARS:
            problems["variant.model"] = f"A model's name, at most {NAME_MAX_CHARS} characters."
        else:
            pins["model"] = model
    return pins


def _skill(skill_id: str) -> Skill:
    skill = Skill.objects.filter(skill_id=skill_id).first()
    if skill is None:
        raise LookupError(f"There is no skill {skill_id!r}.")
    return skill


def _profile(org_node: str) -> AgentProfile:
    profile = profile_console(org_node)
    if profile is None:
        raise LookupError(f"{org_node!r} is no org node's name.")
    return profile
