"""A dataset created or renamed: its name and description checked, each problem named, nothing saved unless
both are right; each change recorded in the audit log with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from graphs.audit import audit_changes, audit_record
from graphs.models import AuditEntry, Dataset, Project
from graphs.projects.folder_check import text_field_problem

NAME_MAX_CHARS = 200
DESCRIPTION_MAX_CHARS = 4000
EDITABLE = ("name", "description")


class DatasetInvalid(ValueError):
    """The fields given cannot make a dataset: ``problems`` maps each field to what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems.items()))
        self.problems = problems


def dataset_create(*, project: Project, fields: Mapping[str, Any], by: AbstractBaseUser | None) -> Dataset:
    """A new dataset of ``project`` from ``fields`` (``name``, ``description``), or raise ``DatasetInvalid``."""
    values = _checked({"name": "", "description": "", **fields}, project=project, current=None)
    try:
        with transaction.atomic():
            dataset = Dataset.objects.create(project=project, **values,
                                             created_by=by if by and by.is_authenticated else None)
            audit_record(actor=by, action=AuditEntry.Action.DATASET_CREATED, object_type="dataset",
                         object_id=dataset.pk, project=project, after=values,
                         summary=f"Created the dataset {dataset.name}")
    except IntegrityError as error:
        # Another request took the name between the check and the insert.
        raise DatasetInvalid({"name": _taken(values["name"])}) from error
    return dataset


def dataset_update(*, dataset: Dataset, changes: Mapping[str, Any], by: AbstractBaseUser | None) -> Dataset:
    """Apply ``changes`` (fields of ``EDITABLE``) to ``dataset`` at once, or raise ``DatasetInvalid`` and
    leave it as it was."""
    before = {name: getattr(dataset, name) for name in EDITABLE}
    values = _checked({**before, **changes}, project=dataset.project, current=dataset)
    old, new = audit_changes(before, values)
    if not new:
        return dataset
    for name, value in new.items():
        setattr(dataset, name, value)
    try:
        with transaction.atomic():
            dataset.save(update_fields=[*new, "updated_at"])
            audit_record(actor=by, action=AuditEntry.Action.DATASET_EDITED, object_type="dataset",
                         object_id=dataset.pk, project=dataset.project, before=old, after=new,
                         summary=f"Edited the dataset {dataset.name}")
    except IntegrityError as error:
        raise DatasetInvalid({"name": _taken(values["name"])}) from error
    return dataset


def _checked(values: dict[str, Any], *, project: Project, current: Dataset | None) -> dict[str, str]:
    problems = {name: "Not a field of a dataset one may set." for name in values if name not in EDITABLE}
    for name, limit in (("name", NAME_MAX_CHARS), ("description", DESCRIPTION_MAX_CHARS)):
        if problem := text_field_problem(values.get(name), limit):
            problems[name] = problem
        else:
            values[name] = values[name].strip().replace("\r\n", "\n")
    if "name" not in problems:
        same = Dataset.objects.filter(project=project, name=values["name"]).exclude(pk=getattr(current, "pk", None))
        if not values["name"]:
            problems["name"] = "Give the dataset a name."
        elif same.exists():
            problems["name"] = _taken(values["name"])
    if problems:
        raise DatasetInvalid(problems)
    return {name: values[name] for name in EDITABLE}


def _taken(name: str) -> str:
    return f"The project has a dataset named {name!r} already."
