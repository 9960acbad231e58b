"""A case added to a dataset: every field checked first, each problem named, nothing saved unless all are right.

A case is given whole (a task's fields, the commit or ref it starts from, its checks), or taken from a
task (``from_task``: its fields, and the base commit of its latest run) or from a run (``from_run``: its
task's fields and the commit it started from), with its checks beside either. The commit is resolved
to a full commit id of the project's repository when the case is saved, through the console's git
(graphs.projects.folder_check): a case names one tree, whatever its branch does later.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from graphs.audit import audit_record
from graphs.datasets.sources import TASK_FIELDS, CaseSource, source_of_run, source_of_task
from graphs.domain.manifest_fields import COMMAND_ARG_MAX_LENGTH, COMMAND_MAX_ARGS
from graphs.models import AuditEntry, Dataset, DatasetCase, Project, Skill, Task, WorkGraphRun
from graphs.projects.folder_check import BASE_REF_MAX_CHARS, folder_check, text_encodable, text_field_problem

TITLE_MAX_CHARS = 300
GOAL_MAX_CHARS = 20_000
# A case's lists hold what a task's do, within the limits POST /api/tasks sets.
MAX_ITEMS = 50
ITEM_MAX_CHARS = 2000
MAX_CHECKS = 20
LIST_FIELDS = ("deliverables", "acceptance_criteria", "constraints", "resources")
# A task made through the API needs both: a case is one such task.
NEEDED_LISTS = ("deliverables", "acceptance_criteria")
SOURCES = ("from_task", "from_run")
ACCEPTED = frozenset({*TASK_FIELDS, "skill", "base_commit", "checks", *SOURCES})


class CaseInvalid(ValueError):
    """The fields given cannot make a case: ``problems`` maps each field to what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems.items()))
        self.problems = problems


def case_create(*, dataset: Dataset, fields: Mapping[str, Any], by: AbstractBaseUser | None) -> DatasetCase:
    """Add a case to ``dataset`` from ``fields`` (the keys of ``ACCEPTED`` a client sent), or raise
    ``CaseInvalid`` naming every problem and save nothing."""
    project = dataset.project
    problems = {name: "Not a field of a case." for name in fields if name not in ACCEPTED}
    named = [name for name in SOURCES if fields.get(name) is not None]
    source = _source(project, fields, named, problems) if named else None
    values = {**source.fields, "skill": source.skill} if source else {} if named else _task_fields(fields, problems)
    base_ref = fields.get("base_commit", "")
    commit = _commit(project, base_ref, source=source, problems=problems) if source or not named else ""
    checks = _checks(fields.get("checks", []), problems)
    if problems:
        raise CaseInvalid(problems)
    with transaction.atomic():
        case = DatasetCase.objects.create(
            dataset=dataset, **values, base_ref=base_ref, base_commit=commit, checks=checks,
            from_task=source.task if source else None, from_run=source.run if source else None,
            created_by=by if by and by.is_authenticated else None,
        )
        dataset.save(update_fields=["updated_at"])
        audit_record(actor=by, action=AuditEntry.Action.DATASET_CASE_ADDED, object_type="dataset",
                     object_id=dataset.pk, project=project, after={"case": case.pk, **_provenance(case)},
                     summary=f"Added the case \u201c{case.title}\u201d at {commit[:12]} to the dataset {dataset.name}")
    return case


def case_from_run(*, dataset: Dataset, run: WorkGraphRun, by: AbstractBaseUser | None) -> DatasetCase:
    """Add ``run`` to ``dataset`` as a case (the "Add to dataset" of its pages), or raise ``CaseInvalid``."""
    return case_create(dataset=dataset, fields={"from_run": run.pk}, by=by)


def _provenance(case: DatasetCase) -> dict[str, Any]:
    return {"base_commit": case.base_commit, "from_task": str(case.from_task_id) if case.from_task_id else None,
            "from_run": str(case.from_run_id) if case.from_run_id else None}


def _source(project: Project, fields: Mapping[str, Any], named: list[str],
            problems: dict[str, str]) -> CaseSource | None:
    """The task or run the ``named`` field takes the case from; None, with the problem named, when there is
    none. A source and the task's own fields exclude each other; so do the two sources, and a run and
    another commit than its own."""
    if len(named) > 1:
        problems["from_run"] = "Give from_task or from_run, not both."
        return None
    name = named[0]
    for field in (*TASK_FIELDS, "skill"):
        if field in fields:
            problems[field] = f"Taken from the {name.removeprefix('from_')}: leave it out, or leave out {name}."
    if name == "from_run" and "base_commit" in fields:
        problems["base_commit"] = "A run's case starts from the run's own commit: leave it out, or use from_task."
    key = _uuid(fields[name])
    if name == "from_task":
        task = Task.objects.filter(pk=key, project=project).first() if key else None
        source = source_of_task(task) if task else None
    else:
        run = WorkGraphRun.objects.select_related("task").filter(pk=key, task__project=project).first() if key else None
        source = source_of_run(run) if run else None
    if source is None:
        problems[name] = f"No {name.removeprefix('from_')} of this dataset's project has the id {fields[name]}."
        return None
    if not source.base_commit and "base_commit" not in fields:
        problems[name] = ("No run of the task has started from a commit: give a base_commit, or run it first."
                          if name == "from_task" else
                          "The run has no commit to start from: its project's folder was no git repository.")
    return source


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def _task_fields(fields: Mapping[str, Any], problems: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, limit, label in (("title", TITLE_MAX_CHARS, "a title"), ("goal_text", GOAL_MAX_CHARS, "a goal")):
        text = fields.get(name, "")
        problem = text_field_problem(text, limit) or (None if text.strip() else f"Give the case {label}.")
        if problem:
            problems[name] = problem
        values[name] = text.strip() if isinstance(text, str) else ""
    for name in LIST_FIELDS:
        items, problem = _items(fields.get(name, []), needed=name in NEEDED_LISTS)
        if problem:
            problems[name] = problem
        values[name] = items
    values["planning_mode"] = fields.get("planning_mode", Task.PlanningMode.GRAPH)
    if values["planning_mode"] not in Task.PlanningMode.values:
        problems["planning_mode"] = f"One of {', '.join(Task.PlanningMode.values)}."
    values["skill"] = None
    if skill_id := fields.get("skill"):
        values["skill"] = Skill.objects.filter(skill_id=skill_id).first() if isinstance(skill_id, str) else None
        if values["skill"] is None:
            problems["skill"] = f"No skill has the id {skill_id}."
    return values


def _items(value: Any, *, needed: bool) -> tuple[list[str], str | None]:
    """The non-empty items of a list of texts, stripped, and what is wrong with it."""
    if not isinstance(value, list):
        return [], "Must be a list of texts."
    problem = next((f"Item {index}: {problem}" for index, item in enumerate(value)
                    if (problem := text_field_problem(item, ITEM_MAX_CHARS))), None)
    items = [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if problem is None and len(items) > MAX_ITEMS:
        problem = f"At most {MAX_ITEMS} items (this has {len(items)})."
    if problem is None and needed and not items:
        problem = "Needs at least one non-empty item."
    return items, problem


def _commit(project: Project, base_ref: Any, *, source: CaseSource | None, problems: dict[str, str]) -> str:
    """The full commit id the case starts from, as the project's repository names it now: ``base_ref``'s
    when given (empty, for a case given whole: the project's base ref, else HEAD), else its source's.
    Empty, with the problem named on the field it came from, when there is none."""
    name, ref = ("base_commit", base_ref) if source is None or base_ref else (source.named, source.base_commit)
    if name in problems or (source is not None and source.named in problems):
        return ""
    if not isinstance(ref, str) or (problem := text_field_problem(ref, BASE_REF_MAX_CHARS)):
        problems[name] = "Must be text." if not isinstance(ref, str) else problem
        return ""
    check = folder_check(folder=project.target_folder, base_ref=ref.strip() or project.base_ref)
    problem = check.problems.get("base_ref")
    if "target_folder" in check.problems:
        problem = f"The project's folder cannot be read: {check.problems['target_folder']}"
    elif problem is None and not check.repository:
        problem = "The project's folder is no git repository: a case needs a commit to start from."
    elif problem is not None and name != "base_commit":
        problem = f"Its run's base commit {ref[:12]} is no longer in the project's repository."
    if problem is not None:
        problems[name] = problem
        return ""
    return check.commit or ""


def _checks(value: Any, problems: dict[str, str]) -> list[list[str]]:
    """``value`` as a list of argv lists, each problem named by the check's index (``checks.<i>``)."""
    if not isinstance(value, list):
        problems["checks"] = 'A list of commands, each a list of strings: [["pytest", "-q"]].'
        return []
    if len(value) > MAX_CHECKS:
        problems["checks"] = f"At most {MAX_CHECKS} checks (this has {len(value)})."
        return []
    for index, argv in enumerate(value):
        if problem := _argv_problem(argv):
            problems[f"checks.{index}"] = problem
    return [list(argv) for argv in value if isinstance(argv, list)]


def _argv_problem(argv: Any) -> str | None:
    if not isinstance(argv, list) or not argv:
        return 'A check is a non-empty list of strings, the program and its arguments: ["pytest", "-q"].'
    if len(argv) > COMMAND_MAX_ARGS:
        return f"At most {COMMAND_MAX_ARGS} arguments (this has {len(argv)})."
    for index, arg in enumerate(argv):
        if not isinstance(arg, str) or not arg:
            return f"Argument {index} is not a non-empty string: each argument is text, none empty."
        if len(arg) > COMMAND_ARG_MAX_LENGTH or "\x00" in arg or not text_encodable(arg):
            return f"Argument {index} is over {COMMAND_ARG_MAX_LENGTH:,} characters or holds a NUL character."
    return None
