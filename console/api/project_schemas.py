"""Request and response shapes of the projects API: a project, its folder check, its members."""

from __future__ import annotations

from decimal import Decimal

from ninja import Field, Schema

from console.api.schemas import InSchema, SpendOut

# A role is text here, not a choice the schema refuses: graphs.projects.members names a wrong one beside
# the username's problems, all at once, in the words the members page shows.
ROLE_DESCRIPTION = "lead, reviewer or viewer."


class FolderCheckOut(Schema):
    folder: str
    base_ref: str
    ok: bool = Field(..., description="True when the folder and base ref may be saved.")
    exists: bool
    readable: bool
    repository: bool = Field(..., description="The folder is the top of a git repository: runs get worktrees.")
    commit: str | None = Field(..., description="The commit the base ref (empty: HEAD) names, in a repository.")
    problems: dict[str, str] = Field(..., description="What is wrong, by field (target_folder, base_ref).")
    notes: list[str] = Field(..., description="What the folder means for runs, in words.")


class ProjectOut(Schema):
    slug: str
    name: str
    target_folder: str | None = Field(..., description="Where the project's work is written; leads only, else null.")
    base_ref: str
    require_plan_approval: bool
    require_change_review: bool = Field(..., description="An attempt's change that passed its judgment waits for a"
                                                         " reviewer before it lands.")
    allow_commands: bool
    allow_command_network: bool
    max_run_cost_usd: Decimal | None = Field(..., description="Each run's budget in USD unless it is given its own.")
    agent: str = Field(..., description="The runner the project chose; empty: the console's WORKGRAPH_AGENT.")
    agent_used: str = Field(..., description="The runner the project's calls use.")
    promotion_min_pass_rate: Decimal | None = Field(
        ..., description="The pass rate (0 to 1) an experiment must reach for its revision to be labelled production;"
                         " null: none.")
    promotion_no_regressions: bool = Field(
        ..., description="A case that passed under the production revision's latest experiment on the dataset"
                         " may not fail under the promoted revision's.")
    role: str
    spend: SpendOut = Field(..., description="What every run of the project's tasks cost.")
    folder_check: FolderCheckOut | None = Field(
        None, description="The folder as checked now; on one project's answers to its leads, else null.")


class ProjectIn(InSchema):
    slug: str
    name: str
    target_folder: str = Field(..., description="The absolute path of the folder agents work in.")
    base_ref: str = ""
    require_plan_approval: bool = False
    require_change_review: bool = Field(False, description="Hold every attempt's change for a reviewer's approval"
                                                           " before it lands on the run's branch.")
    allow_commands: bool = False
    allow_command_network: bool = False
    max_run_cost_usd: Decimal | None = None
    agent: str = Field("", description="A runner name; empty: the console's WORKGRAPH_AGENT.")
    promotion_min_pass_rate: Decimal | None = None
    promotion_no_regressions: bool = False
    confirm_commands: bool = Field(
        False, description="Required (true) to turn on allow_commands or allow_command_network: they let agents'"
                           " command nodes run programs in the folder, and reach the network.")


class ProjectPatch(InSchema):
    """The fields to change; those left out stay as they are. The slug never changes."""

    name: str | None = None
    target_folder: str | None = None
    base_ref: str | None = None
    require_plan_approval: bool | None = None
    require_change_review: bool | None = None
    allow_commands: bool | None = None
    allow_command_network: bool | None = None
    max_run_cost_usd: Decimal | None = Field(None, description="null: no budget.")
    agent: str | None = None
    promotion_min_pass_rate: Decimal | None = Field(None, description="null: no minimum.")
    promotion_no_regressions: bool | None = None
    confirm_commands: bool = False


class FolderCheckIn(InSchema):
    target_folder: str
    base_ref: str = ""


class MemberOut(Schema):
    username: str
    role: str


class MemberIn(InSchema):
    username: str
    role: str = Field(..., description=ROLE_DESCRIPTION)


class MemberRoleIn(InSchema):
    role: str = Field(..., description=ROLE_DESCRIPTION)
