"""Request and response shapes of the skills and agent profiles API: each record with its revisions and the
labels they carry. The rules a new revision's fields must follow are the editors' forms' (console.forms),
so that the pages and the API refuse the same things in the same words."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from console.api.schemas import InSchema

_BASE = Field(..., ge=0, description="The number of the revision the change was made on (0: none yet). A newer"
                                     " one is a 409 conflict: nothing is saved.")
_LABELS = Field(..., description="Each label (production, staging) with the number of the revision carrying it.")
_RUN = Field(..., description="The revision runs of tasks use: the one labelled production, else the newest.")


class RevisionLabelsOut(Schema):
    latest_revision: int | None
    labels: dict[str, int] = _LABELS
    run_revision: int | None = _RUN


class RevisionOut(Schema):
    number: int
    note: str
    author: str | None
    created_at: datetime
    labels: list[str] = Field(..., description="The labels this revision carries.")


class SkillOut(RevisionLabelsOut):
    skill_id: str
    name: str
    description: str
    owner_org_node: str
    status: str


class SkillRevisionOut(RevisionOut):
    name: str
    description: str
    owner_org_node: str
    body: str


class SkillDetailOut(SkillOut):
    revisions: list[SkillRevisionOut] = Field(..., description="Newest first.")


class SkillRevisionIn(InSchema):
    body: str = Field(..., description="Markdown; a fenced block tagged team-template may hold the skill's team.")
    base_revision: int = _BASE
    name: str | None = Field(None, description="Left out: unchanged.")
    description: str | None = Field(None, description="Left out: unchanged.")
    owner_org_node: str | None = Field(None, description="Left out: unchanged.")
    note: str = Field("", description="What changed and why, kept with the revision.")


class AgentProfileOut(RevisionLabelsOut):
    org_node: str
    description: str
    model: str
    overrides: list[str] = Field(..., description="The projects with an override of this profile, by slug.")


class ProfileContentOut(Schema):
    description: str
    instructions: str
    model: str
    effort: str
    permission_mode: str
    max_turns: int | None
    repository_definition_first: bool
    allowed_tools: list[str]
    disallowed_tools: list[str]


class AgentProfileRevisionOut(RevisionOut, ProfileContentOut):
    pass


class AgentProfileDetailOut(AgentProfileOut, ProfileContentOut):
    revisions: list[AgentProfileRevisionOut] = Field(..., description="Newest first.")


class AgentProfileRevisionIn(InSchema):
    """The fields to change; those left out stay as the newest revision has them."""

    base_revision: int = _BASE
    description: str | None = None
    instructions: str | None = None
    model: str | None = Field(None, description="Empty: the runner's default model.")
    effort: str | None = Field(None, json_schema_extra={"enum": ["", "low", "medium", "high", "xhigh", "max"]})
    permission_mode: str | None = Field(
        None, json_schema_extra={"enum": ["dontAsk", "acceptEdits", "auto", "bypassPermissions", "plan"]})
    max_turns: int | None = Field(None, description="null: no bound of its own.")
    repository_definition_first: bool | None = None
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    note: str = Field("", description="What changed and why, kept with the revision.")
