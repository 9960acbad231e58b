"""The API's shapes of delivery: a run's ``delivery`` object (``RunOut.delivery``) and a project's delivery
settings."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from graphs.models import RunDelivery


class DeliveryPullRequestOut(Schema):
    number: int = Field(..., description="Its number on the forge (a GitLab merge request's iid).")
    url: str


class DeliveryCheckOut(Schema):
    name: str
    status: str = Field(..., description="queued, in_progress or completed.")
    conclusion: str | None = Field(..., description="Once completed: success, failure, neutral, cancelled, skipped,"
                                                    " timed_out or action_required.")
    url: str


class DeliveryFeedbackOut(Schema):
    kind: str = Field(..., description="check (a check failed on the delivered head) or review (changes requested).")
    name: str = Field(..., description="The check's name, or the reviewer's.")
    outcome: str = Field(..., description="started (a follow-up run), person_needed (the fix attempts are spent)"
                                          " or not_started.")
    note: str = Field(..., description="What the console did, in words.")
    follow_up_run: str | None = Field(..., description="The follow-up run's id, when one was started.")
    created_at: datetime


class DeliveryOut(Schema):
    state: str = Field(..., json_schema_extra={"enum": RunDelivery.State.values},
                       description="pending (being tried, or waiting for its next try), pushed, opened, failed,"
                                   " merged or closed.")
    state_label: str
    remote_branch: str = Field(..., description="The branch on the remote.")
    head_commit: str = Field(..., description="The commit last pushed there; empty before the first push.")
    pull_request: DeliveryPullRequestOut | None
    checks: list[DeliveryCheckOut] = Field(..., description="The forge's checks of the pushed head, as last read.")
    error: str = Field(..., description="Why the last try failed, in words (variables named, values never); empty"
                                        " once it succeeds.")
    attempts: int = Field(..., description="Tries since it was last asked for.")
    next_try_at: datetime | None = Field(..., description="When a transient failure is tried again.")
    trigger: str = Field(..., description="succeeded (the run succeeded) or requested (a lead asked).")
    pushed_at: datetime | None
    opened_at: datetime | None
    updated_at: datetime
    feedback: list[DeliveryFeedbackOut] = Field(..., description="What the forge said of the pull request that"
                                                                 " asked for work, and what the console did.")


class DeliverySettingsOut(Schema):
    project: str = Field(..., description="The project's slug.")
    deliver: str = Field(..., description="off, push or pull_request.")
    remote_url: str
    forge: str = Field(..., description="github, gitlab, gitea (Forgejo too), or empty to push only.")
    forge_api_url: str
    forge_repo: str
    forge_token_env: str = Field(..., description="The name of the console's variable holding the token.")
    forge_webhook_secret_env: str = Field(..., description="The name of the variable holding the webhook secret.")
    notes: list[str] = Field(..., description="What the settings mean now, beyond problems: a variable not set.")
