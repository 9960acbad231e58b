"""What a client sends to create a task: each rule a field's, so that every problem is named at once."""

from __future__ import annotations

from typing import Literal

from ninja import Field
from pydantic import ValidationInfo, field_validator

from console.api.schemas import InSchema
from graphs.models import Task

MAX_ITEMS = 50
MAX_ITEM_CHARS = 2000


def _clean_items(values: list[str]) -> list[str]:
    items = [value.strip() for value in values if value and value.strip()]
    if len(items) > MAX_ITEMS:
        raise ValueError(f"at most {MAX_ITEMS} items")
    if any(len(item) > MAX_ITEM_CHARS for item in items):
        raise ValueError(f"each item must be at most {MAX_ITEM_CHARS} characters")
    return items


def _clean_some_items(values: list[str]) -> list[str]:
    if not (items := _clean_items(values)):
        raise ValueError("needs at least one non-empty item")
    return items


class TaskIn(InSchema):
    project: str = Field(..., description="The project's slug.", max_length=50)
    title: str = Field(..., min_length=1, max_length=300)
    goal_text: str = Field(..., min_length=1, max_length=20_000)
    deliverables: list[str] = Field(..., min_length=1)
    acceptance_criteria: list[str] = Field(..., min_length=1)
    constraints: list[str] = []
    resources: list[str] = []
    task_type: Literal["dynamic", "workflow"] = "dynamic"
    workflow_id: str = Field("", max_length=200, validate_default=True)  # a workflow task must not leave it out
    planning_mode: Literal["graph", "gap_driven"] = Field(
        "graph", description="graph: the planner plans the whole graph; gap_driven: rounds of tasks until no gap.")

    # Each rule is a field's, named beside the others' problems: a model validator runs only once all are right.
    _items = field_validator("constraints", "resources")(_clean_items)
    _some_items = field_validator("deliverables", "acceptance_criteria")(_clean_some_items)

    @field_validator("workflow_id")
    @classmethod
    def _workflow_needs_id(cls, workflow_id: str, info: ValidationInfo) -> str:
        if info.data.get("task_type") == Task.TaskType.WORKFLOW and not workflow_id.strip():
            raise ValueError("a workflow task needs workflow_id")
        return workflow_id
