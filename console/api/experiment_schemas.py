"""Request and response shapes of the experiments API and of a label moved through the promotion gate. An
experiment's fields are taken as sent and checked by graphs.experiments, which names every problem at once:
a shape refused here would hide the others."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from ninja import Field, Schema

from console.api.schemas import InSchema


class ExperimentIn(InSchema):
    dataset: int = Field(..., description="The dataset whose cases it runs.")
    name: Any = Field(None, json_schema_extra={"type": "string", "maxLength": 200})
    variant: Any = Field(None, description="skills: skill_id → revision number or label; profiles: org node →"
                                           " revision number or label; agent and model, each optional.",
                         json_schema_extra={"type": "object"})
    repetitions: Any = Field(1, description="How often each case runs, 1 to 5.", json_schema_extra={"type": "integer"})
    concurrency: Any = Field(1, description="How many of its runs run at once.", json_schema_extra={"type": "integer"})
    max_cost_usd: Any = Field(None, description="What all its runs may spend together; null: no budget.",
                              json_schema_extra={"type": ["number", "null"]})


class CheckOut(Schema):
    argv: list[str]
    passed: bool
    exit_code: int | None
    output: str = ""


class ItemOut(Schema):
    id: int
    case: int = Field(..., description="The dataset case's id.")
    case_title: str
    repetition: int
    status: str = Field(..., description="pending, running, scored or not_run.")
    run: UUID | None
    run_status: str | None
    passed: bool | None
    checks: list[CheckOut]
    cost_usd: Decimal
    input_tokens: int
    output_tokens: int
    duration_ms: int | None
    loop_backs: int
    retries: int


class AggregateOut(Schema):
    items: int
    scored: int
    passed: int
    pass_rate: float | None
    pass_rate_low: float | None = Field(..., description="The 95 % Wilson interval's lower end.")
    pass_rate_high: float | None
    total_cost_usd: Decimal
    median_cost_usd: Decimal | None
    median_duration_ms: float | None
    input_tokens: int = Field(..., description="The scored items' input tokens together.")
    output_tokens: int
    loop_backs: int = Field(..., description="The scored items' loop-backs together.")
    retries: int


class ExperimentOut(Schema):
    id: int
    project: str
    dataset: int
    name: str
    status: str = Field(..., description="running, finished, cancelled or budget_exceeded.")
    error: str
    variant: dict[str, Any]
    pins: dict[str, Any] = Field(..., description="The revisions it runs with, resolved to numbers when it was made.")
    repetitions: int
    concurrency: int
    max_cost_usd: Decimal | None
    created_by: str | None
    created_at: datetime
    finished_at: datetime | None
    aggregate: AggregateOut
    items: list[ItemOut]


class FlippedOut(Schema):
    case: int
    title: str
    a_passed: bool
    b_passed: bool
    a_run: UUID | None
    b_run: UUID | None
    compare_url: str | None = Field(..., description="The page comparing the two runs.")


class ComparisonOut(Schema):
    a: AggregateOut
    b: AggregateOut
    differences: dict[str, Any] = Field(..., description="b's figure minus a's.")
    flipped: list[FlippedOut] = Field(..., description="Cases whose outcome flipped, pass → fail first.")
    same_dataset: bool


class LabelIn(InSchema):
    revision: int = Field(..., ge=1)
    experiment: int | None = Field(None, description="The experiment that measured the revision.")
    force: bool = Field(False, description="A skill admin's override of the gate, recorded with its reasons.")


class LabelOut(Schema):
    label: str
    revision: int
    experiment: int | None
    forced: bool = False
    overridden: list[str] = []
