"""The audit log: one row per decision a person took, appended and never changed.

An entry keeps the actor's name and the project's slug as text beside their keys, so deleting a user
or a project leaves the entry readable (the keys alone go null). The default manager refuses updates
and deletes, and so does the row itself; the base manager Django's deletion collector uses stays plain,
so a deleted user or project can still set its key null.
"""

from __future__ import annotations

from typing import Any, NoReturn

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from graphs.errors import WorkGraphError


class AuditEntryImmutable(WorkGraphError):
    """An audit entry was asked to change or go: the log is append-only."""

    def __init__(self) -> None:
        super().__init__("audit entries are append-only: they are never changed or deleted")


class AuditEntryQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> NoReturn:
        raise AuditEntryImmutable

    def delete(self) -> NoReturn:
        raise AuditEntryImmutable

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> NoReturn:
        raise AuditEntryImmutable


class AuditEntry(models.Model):
    class Action(models.TextChoices):
        """Every decision the log records: its stored name, and the words a page shows for it."""

        PLAN_APPROVED = "plan.approved", "approved a plan"
        PLAN_REJECTED = "plan.rejected", "rejected a plan"
        APPEND_APPROVED = "append.approved", "approved an append"
        APPEND_REJECTED = "append.rejected", "rejected an append"
        CHANGE_REVIEW_APPROVED = "change_review.approved", "approved a change"
        CHANGE_REVIEW_CHANGES_REQUESTED = "change_review.changes_requested", "requested changes"
        CHANGE_REVIEW_COMMENTED = "change_review.commented", "commented on a change"
        RUN_CANCELLED = "run.cancelled", "cancelled a run"
        RUN_FORKED = "run.forked", "forked a run"
        RUN_FORK_EDITED = "run.fork_edited", "forked a run with edits"
        RUN_BUDGET_RAISED = "run.budget_raised", "raised a run's budget"
        PROJECT_CREATED = "project.created", "created a project"
        PROJECT_EDITED = "project.edited", "edited a project"
        DELIVERY_EDITED = "delivery.edited", "changed where a project delivers"
        DELIVERY_REQUESTED = "delivery.requested", "asked for a run's delivery"
        FORGE_EVENT_REFUSED = "forge_event.refused", "sent a forge event the console refused"
        MEMBER_ADDED = "member.added", "added a member"
        MEMBER_ROLE_CHANGED = "member.role_changed", "changed a member's role"
        MEMBER_REMOVED = "member.removed", "removed a member"
        SKILL_EDITED = "skill.edited", "edited a skill"
        AGENT_PROFILE_EDITED = "agent_profile.edited", "edited an agent profile"
        SKILL_LABEL_MOVED = "skill.label_moved", "moved a skill's label"
        AGENT_PROFILE_LABEL_MOVED = "agent_profile.label_moved", "moved an agent profile's label"
        DATASET_CREATED = "dataset.created", "created a dataset"
        DATASET_EDITED = "dataset.edited", "edited a dataset"
        DATASET_CASE_ADDED = "dataset.case_added", "added a case to a dataset"
        TOKEN_CREATED = "token.created", "created an API token"
        TOKEN_REVOKED = "token.revoked", "revoked an API token"
        WEBHOOK_CREATED = "webhook.created", "added a webhook"
        WEBHOOK_EDITED = "webhook.edited", "edited a webhook"
        WEBHOOK_DELETED = "webhook.deleted", "deleted a webhook"
        SIGN_IN_FAILED = "sign_in.failed", "failed to sign in"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_entries"
    )
    actor_name = models.CharField(
        max_length=150, blank=True, help_text="The actor's username when the entry was written (a failed sign-in's:"
                                              " the name tried); kept when the user is deleted.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    project = models.ForeignKey(
        "graphs.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_entries"
    )
    project_slug = models.CharField(max_length=50, blank=True, help_text="Kept when the project is deleted.")
    action = models.CharField(max_length=64, choices=Action.choices, db_index=True)
    object_type = models.CharField(max_length=64, help_text="What the decision was about: run, project, skill, …")
    object_id = models.CharField(max_length=200)
    summary = models.TextField(help_text="What happened, in the console's words.")
    before = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    ip = models.GenericIPAddressField(null=True, blank=True, help_text="The address a sign-in came from.")

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit entries"
        indexes = [
            models.Index(fields=["-created_at", "-id"], name="audit_newest_first"),
            models.Index(fields=["project", "-created_at", "-id"], name="audit_project_newest_first"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_name or '—'} {self.action}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AuditEntryImmutable
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AuditEntryImmutable
