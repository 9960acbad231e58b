"""Request and response shapes of the datasets API. A case's fields are taken as sent and checked by
graphs.datasets, which names every problem at once: a shape refused here would hide the others."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from ninja import Field, Schema

from console.api.schemas import InSchema
from graphs.models import Dataset, DatasetCase

_TEXTS = {"type": "array", "items": {"type": "string"}}


def _username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


class DatasetIn(InSchema):
    name: str = Field(..., description="Unique in the project.")
    description: str = ""


class DatasetPatch(InSchema):
    """The fields to change; those left out stay as they are."""

    name: str | None = None
    description: str | None = None


class DatasetOut(Schema):
    id: int
    project: str
    name: str
    description: str
    case_count: int
    created_by: str | None
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_project(dataset: Dataset) -> str:
        return dataset.project.slug

    @staticmethod
    def resolve_created_by(dataset: Dataset) -> str | None:
        return _username(dataset.created_by)


class CaseIn(InSchema):
    """A case given whole (the task's fields, ``base_commit``, ``checks``), or ``from_task`` / ``from_run``
    (with ``checks``; ``from_task`` also takes a ``base_commit`` instead of its latest run's)."""

    title: Any = Field(None, json_schema_extra={"type": "string", "maxLength": 300})
    goal_text: Any = Field(None, json_schema_extra={"type": "string", "maxLength": 20_000})
    deliverables: Any = Field(None, description="At least one.", json_schema_extra=_TEXTS)
    acceptance_criteria: Any = Field(None, description="At least one.", json_schema_extra=_TEXTS)
    constraints: Any = Field(None, json_schema_extra=_TEXTS)
    resources: Any = Field(None, json_schema_extra=_TEXTS)
    planning_mode: Any = Field(None, json_schema_extra={"enum": ["graph", "gap_driven"]})
    skill: Any = Field(None, description="A skill_id whose team template guides planning.",
                       json_schema_extra={"type": "string"})
    base_commit: Any = Field(
        None, description="A commit, branch or tag of the project's repository, saved as the full commit id it names"
                          " now; left out: the project's base ref.", json_schema_extra={"type": "string"})
    checks: Any = Field(None, description="Commands the final tree must pass, each an argv list: "
                                          '[["pytest", "-q"]].',
                        json_schema_extra={"type": "array", "items": _TEXTS})
    from_task: Any = Field(None, description="A task of the project: its fields, and its latest run's base commit.",
                           json_schema_extra={"type": "string", "format": "uuid"})
    from_run: Any = Field(None, description="A run of the project: its task's fields and its base commit.",
                          json_schema_extra={"type": "string", "format": "uuid"})


class CaseOut(Schema):
    id: int
    title: str
    goal_text: str
    deliverables: list[str]
    acceptance_criteria: list[str]
    constraints: list[str]
    resources: list[Any]
    planning_mode: str
    skill: str | None = Field(..., description="The skill_id guiding its planning, if any.")
    base_ref: str = Field(..., description="What it was asked to start from; empty: its source's, or the project's.")
    base_commit: str = Field(..., description="The full commit id its runs start from.")
    checks: list[list[str]]
    from_task: UUID | None
    from_run: UUID | None
    created_by: str | None
    created_at: datetime

    @staticmethod
    def resolve_skill(case: DatasetCase) -> str | None:
        return case.skill.skill_id if case.skill_id else None

    @staticmethod
    def resolve_from_task(case: DatasetCase) -> UUID | None:
        return case.from_task_id

    @staticmethod
    def resolve_from_run(case: DatasetCase) -> UUID | None:
        return case.from_run_id

    @staticmethod
    def resolve_created_by(case: DatasetCase) -> str | None:
        return _username(case.created_by)


class DatasetDetailOut(DatasetOut):
    cases: list[CaseOut] = Field(..., description="In the order they were added.")

    @staticmethod
    def resolve_cases(dataset: Dataset) -> list[DatasetCase]:
        # The endpoint reads them with what each row shows (graphs.datasets.reads.dataset_cases).
        return dataset.case_rows
