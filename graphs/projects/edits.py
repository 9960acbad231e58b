"""A project created or changed whole: every field checked first, each problem named, nothing saved
unless all are right.

Turning on commands (or their network) needs ``confirm_commands``: it lets agents run programs, which a
lead agrees to knowingly, not by a stray tick.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, transaction

from graphs.agents import get_runner, runner_names
from graphs.audit import audit_record
from graphs.models import AuditEntry, Project, ProjectMembership
from graphs.projects.folder_check import FolderCheck, folder_check, text_field_problem

SLUG_MAX_CHARS = 50
NAME_MAX_CHARS = 200
AGENT_MAX_CHARS = 100
SLUG_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")
# /projects/new/ is the page that creates one.
RESERVED_SLUGS = frozenset({"new"})
# What a project's DecimalField stores: 12 digits, 4 after the point.
BUDGET_MAX = Decimal("99999999.9999")
COMMANDS_CONFIRMATION = (
    "Allowing commands lets command nodes and command judgments run any program in the project's folder"
    " (each attempt's worktree) inside the agents' sandbox, with the files there read-write; with network,"
    " those programs also reach any host. Confirm to turn it on."
)
TEXT_FIELDS = {"slug": SLUG_MAX_CHARS, "name": NAME_MAX_CHARS, "target_folder": 1000, "base_ref": 200,
               "agent": AGENT_MAX_CHARS}
BOOLEAN_FIELDS = ("require_plan_approval", "require_change_review", "allow_commands", "allow_command_network",
                  "promotion_no_regressions")
EDITABLE = ("name", "target_folder", "base_ref", *BOOLEAN_FIELDS, "max_run_cost_usd", "agent",
            "promotion_min_pass_rate")


class ProjectInvalid(ValueError):
    """The fields given cannot make a project: ``problems`` maps each field to what is wrong with it."""

    def __init__(self, problems: dict[str, str], check: FolderCheck | None = None) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems.items()))
        self.problems = problems
        self.check = check


@dataclass(frozen=True)
class ProjectSaved:
    project: Project
    check: FolderCheck


def agent_choices() -> list[str]:
    """The runner names a project may choose (empty, on a project, keeps the console's default)."""
    return runner_names()


def project_create(*, created_by: AbstractBaseUser, fields: dict[str, Any], confirm_commands: bool = False
                   ) -> ProjectSaved:
    """Create a project from ``fields`` with ``created_by`` as its lead, or raise ``ProjectInvalid``."""
    values = {"base_ref": "", "require_plan_approval": False, "require_change_review": False, "allow_commands": False,
              "allow_command_network": False, "max_run_cost_usd": None, "agent": "", "promotion_no_regressions": False,
              "promotion_min_pass_rate": None, **fields}
    problems = {name: "Required." for name in ("slug", "name", "target_folder") if name not in fields}
    check = _checked(values, before=None, problems=problems, confirm_commands=confirm_commands)
    try:
        with transaction.atomic():
            project = Project.objects.create(**{name: values[name] for name in ("slug", *EDITABLE)})
            ProjectMembership.objects.create(project=project, user=created_by, role=ProjectMembership.Role.LEAD)
            audit_record(actor=created_by, action=AuditEntry.Action.PROJECT_CREATED, object_type="project",
                         object_id=project.slug, project=project, after={name: values[name] for name in EDITABLE},
                         summary=f"Created the project {project.slug} \u201c{project.name}\u201d, leading it")
    except IntegrityError as error:
        # Another request took the slug between the check and the insert.
        raise ProjectInvalid({"slug": f"A project with the slug {values['slug']!r} exists already."}, check) from error
    return ProjectSaved(project=project, check=check)


def project_update(*, project: Project, changes: dict[str, Any], confirm_commands: bool = False,
                   by: AbstractBaseUser | None = None) -> ProjectSaved:
    """Apply ``changes`` (fields of ``EDITABLE``) to ``project`` at once, or raise ``ProjectInvalid`` and
    leave it as it was. The slug never changes: pages and clients link to it. The audit log records
    ``by`` changing the fields that changed, before and after."""
    problems = {name: "The slug cannot change: pages and clients link to it." if name == "slug" else
                "Not a field of a project one may change." for name in changes if name not in EDITABLE}
    before = {name: getattr(project, name) for name in ("slug", *EDITABLE)}
    values = {**before, **{name: value for name, value in changes.items() if name in EDITABLE}}
    check = _checked(values, before=before, problems=problems, confirm_commands=confirm_commands)
    changed = [name for name in EDITABLE if values[name] != before[name]]
    for name in changed:
        setattr(project, name, values[name])
    if changed:
        with transaction.atomic():
            project.save(update_fields=changed)
            audit_record(actor=by, action=AuditEntry.Action.PROJECT_EDITED, object_type="project",
                         object_id=project.slug, project=project, before={name: before[name] for name in changed},
                         after={name: values[name] for name in changed},
                         summary=f"Changed {', '.join(changed)} of the project {project.slug}")
    return ProjectSaved(project=project, check=check)


def _checked(values: dict[str, Any], *, before: dict[str, Any] | None, problems: dict[str, str],
             confirm_commands: bool) -> FolderCheck:
    """Normalize ``values`` in place and check them all; raise ``ProjectInvalid`` with every problem."""
    for name, limit in TEXT_FIELDS.items():
        if name in problems:
            continue
        if problem := text_field_problem(values.get(name), limit):
            problems[name] = problem
        else:
            values[name] = values[name].strip()
    for name in BOOLEAN_FIELDS:
        if not isinstance(values.get(name), bool):
            problems[name] = "Must be true or false."
    if before is None and "slug" not in problems:
        problems.update(_slug_problems(values["slug"]))
    if "name" not in problems and not values["name"]:
        problems["name"] = "Give the project a name."
    problems.update(_budget_problems(values))
    problems.update(_pass_rate_problems(values))
    if "agent" not in problems:
        problems.update(_agent_problems(values["agent"]))
    problems.update(_commands_problems(values, before=before, confirm=confirm_commands))
    check = None
    if "target_folder" not in problems and "base_ref" not in problems:
        check = folder_check(folder=values["target_folder"], base_ref=values["base_ref"])
        problems.update({name: message for name, message in check.problems.items() if name not in problems})
    if problems:
        raise ProjectInvalid(problems, check)
    assert check is not None
    return check


def _slug_problems(slug: str) -> dict[str, str]:
    if not SLUG_PATTERN.match(slug):
        return {"slug": "Lowercase letters, digits, '-' and '_', starting and ending with a letter or digit."}
    if slug in RESERVED_SLUGS:
        return {"slug": f"{slug!r} is taken by the console's own pages; choose another."}
    if Project.objects.filter(slug=slug).exists():
        return {"slug": f"A project with the slug {slug!r} exists already."}
    return {}


def _budget_problems(values: dict[str, Any]) -> dict[str, str]:
    budget = values.get("max_run_cost_usd")
    if budget is None or budget == "":
        values["max_run_cost_usd"] = None
        return {}
    try:
        amount = Decimal(str(budget))
    except InvalidOperation:
        return {"max_run_cost_usd": "A budget is an amount in USD, like 5 or 2.50."}
    if not amount.is_finite():
        return {"max_run_cost_usd": "A budget is an amount in USD, like 5 or 2.50."}
    if amount <= 0:
        return {"max_run_cost_usd": "A budget must be more than zero; leave it empty for no budget."}
    if amount > BUDGET_MAX or amount != amount.quantize(Decimal("0.0001")):
        return {"max_run_cost_usd": f"At most {BUDGET_MAX} USD, with at most 4 digits after the point."}
    values["max_run_cost_usd"] = amount
    return {}


def _pass_rate_problems(values: dict[str, Any]) -> dict[str, str]:
    rate = values.get("promotion_min_pass_rate")
    if rate is None or rate == "":
        values["promotion_min_pass_rate"] = None
        return {}
    try:
        amount = Decimal(str(rate))
    except InvalidOperation:
        amount = Decimal("NaN")
    if isinstance(rate, bool) or not amount.is_finite() or not 0 <= amount <= 1 \
            or amount != amount.quantize(Decimal("0.001")):
        return {"promotion_min_pass_rate": "A pass rate from 0 to 1 (0.8 for 80 %), with at most 3 digits after the"
                                           " point; leave it empty for no minimum."}
    values["promotion_min_pass_rate"] = amount
    return {}


def _agent_problems(agent: str) -> dict[str, str]:
    if not agent:
        return {}
    if agent not in runner_names():
        return {"agent": f"Unknown agent runner {agent!r}; choose one of {', '.join(runner_names())}, or leave it"
                         " empty for the console's default."}
    try:
        get_runner(agent)
    except ImproperlyConfigured as error:
        return {"agent": f"The {agent} runner is not set up on this console: {error}."}
    return {}


def _commands_problems(values: dict[str, Any], *, before: dict[str, Any] | None, confirm: bool) -> dict[str, str]:
    if values.get("allow_command_network") is True and values.get("allow_commands") is False:
        return {"allow_command_network": "Commands must be allowed for them to reach the network."}
    turned_on = [name for name in ("allow_commands", "allow_command_network")
                 if values.get(name) is True and (before is None or not before[name])]
    if turned_on and not confirm:
        return {name: COMMANDS_CONFIRMATION for name in turned_on}
    return {}
