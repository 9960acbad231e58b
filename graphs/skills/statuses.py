"""A skill's status transitions (draft → active → deprecated → active) and their recorded history."""

from __future__ import annotations

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.db.models import QuerySet

from graphs.audit import audit_record
from graphs.errors import InvalidTransitionError, WorkGraphError
from graphs.models import AuditEntry, Skill

_TRANSITIONS: dict[str, frozenset[str]] = {
    Skill.Status.DRAFT: frozenset({Skill.Status.ACTIVE}),
    Skill.Status.ACTIVE: frozenset({Skill.Status.DEPRECATED}),
    Skill.Status.DEPRECATED: frozenset({Skill.Status.ACTIVE}),
}


def skill_status_change(*, skill: Skill, status: str, reason: str, by: AbstractBaseUser | None) -> Skill:
    """Move ``skill`` to ``status`` (draft → active → deprecated → active), recording why and who.

    Raises InvalidTransitionError naming both states for any other move, and WorkGraphError without
    a reason. The reason is kept on the skill; the move is also written to the skill's admin history.
    """
    reason = reason.strip()
    if not reason:
        raise WorkGraphError("say why the status changes")
    current = skill.status
    if status not in _TRANSITIONS.get(current, frozenset()):
        raise InvalidTransitionError(entity="skill", current=current, requested=status)
    with transaction.atomic():
        moved = Skill.objects.filter(pk=skill.pk, status=current).update(status=status, status_reason=reason)
        if moved != 1:
            skill.refresh_from_db(fields=["status"])
            raise InvalidTransitionError(entity="skill", current=skill.status, requested=status)
        audit_record(actor=by, action=AuditEntry.Action.SKILL_EDITED, object_type="skill", object_id=skill.skill_id,
                     before={"status": current}, after={"status": status},
                     summary=f"Made the skill {skill.skill_id} {status}: {reason}")
    skill.refresh_from_db()
    if by is not None and by.is_authenticated:
        LogEntry.objects.log_actions(
            user_id=by.pk, queryset=[skill], action_flag=CHANGE,
            change_message=f"status {current} → {status}: {reason}", single_object=True,
        )
    return skill


def skill_allowed_statuses(skill: Skill) -> list[str]:
    """The statuses ``skill`` may move to from its current one."""
    return sorted(_TRANSITIONS.get(skill.status, frozenset()))


def skill_status_history(skill: Skill) -> QuerySet[LogEntry]:
    """The recorded status changes (and admin edits) of ``skill``, newest first."""
    return LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Skill), object_id=str(skill.pk)
    ).select_related("user").order_by("-action_time")
