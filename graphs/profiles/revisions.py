"""Saving an agent profile, each change kept as an ``AgentProfileRevision``, and the diff of two revisions.

Every change of a profile goes through ``profile_save``: the console pages, the Django admin and the
shipped profiles created on first use all call it. An editor names the revision it was made on: a save
over a newer one is a ``RevisionConflict`` and saves nothing. Numbering, diffs, conflicts and labels are
``graphs.revisions``'; this module keeps what only a profile has: its fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from graphs.audit import audit_record, audit_revision
from graphs.domain.revisions import Content, DiffLine, RevisionField, revision_content, revisions_diff
from graphs.models import AgentProfile, AgentProfileRevision, AuditEntry
from graphs.revisions import revision_label_move, revision_save


def _tools(value: list[str] | None) -> list[str]:
    return list(value or [])


def _tools_text(value: list[str]) -> str:
    return ", ".join(value)


def _max_turns_text(value: int | None) -> str:
    return "" if value is None else str(value)


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


# What a revision copies of its profile, in its editor's order.
FIELDS = (
    RevisionField(name="description", label="Description", line="description"),
    RevisionField(name="instructions", label="Instructions", line="instructions", block=True),
    RevisionField(name="model", label="Model", line="model", empty="(runner default)"),
    RevisionField(name="effort", label="Effort", line="effort", empty="(model default)"),
    RevisionField(name="permission_mode", label="Permission mode", line="permission mode"),
    RevisionField(name="max_turns", label="Max turns", line="max turns", empty="—", text=_max_turns_text),
    RevisionField(name="repository_definition_first", label="The repository's own definition first",
                  line="repository definition first", text=_yes_no),
    RevisionField(name="allowed_tools", label="Allowed tools", line="allowed tools", empty="—", stored=_tools,
                  text=_tools_text),
    RevisionField(name="disallowed_tools", label="Disallowed tools", line="disallowed tools", empty="—",
                  stored=_tools, text=_tools_text),
)


def profile_save(
    *, profile: AgentProfile, author: AbstractBaseUser | None, note: str = "", base_revision: int | None = None
) -> AgentProfileRevision | None:
    """Save ``profile`` (new or existing) as its caller set it, and keep a revision of its content.

    A revision is created when the content differs from the latest revision's, or when the profile has
    none yet; returns it, or None when nothing changed. ``base_revision`` is the revision an editor was
    opened on (0: none yet): when a newer one exists, raises ``RevisionConflict`` and saves nothing.
    """
    # Browsers send textarea lines ending in CRLF; unnormalized, every save would look like a change.
    profile.instructions = profile.instructions.replace("\r\n", "\n")
    profile.description = profile.description.replace("\r\n", "\n")

    def create(number: int, content: Content) -> AgentProfileRevision:
        return AgentProfileRevision.objects.create(
            profile=profile, number=number, **content,
            author=author if author and author.is_authenticated else None, note=note,
        )

    def audit(revision: AgentProfileRevision, before: Content | None, after: Content) -> None:
        whose = f"{profile.project.slug}'s override of " if profile.project_id else ""
        audit_revision(actor=author, action=AuditEntry.Action.AGENT_PROFILE_EDITED, object_type="agent_profile",
                       object_id=profile.org_node, what=f"{whose}the {profile.org_node} agent profile",
                       number=revision.number, before=before, after=after, note=note, project=profile.project)

    return revision_save(record=profile, fields=FIELDS, base_revision=base_revision, record_write=profile.save,
                         revision_create=create, revision_audit=audit)


def profile_content(source: AgentProfile | AgentProfileRevision) -> Content:
    """The content fields of a profile or a revision, as a revision stores them."""
    return revision_content(fields=FIELDS, source=source)


def profile_revisions_diff(*, old: AgentProfileRevision, new: AgentProfileRevision) -> list[DiffLine]:
    """A unified diff from ``old`` to ``new``, settings and instructions, for the page to render escaped."""
    return revisions_diff(fields=FIELDS, old=profile_content(old), new=profile_content(new), old_number=old.number,
                          new_number=new.number)


def profile_label_move(*, profile: AgentProfile, label: str, number: int, by: AbstractBaseUser | None,
                       details: Mapping[str, Any] | None = None) -> int | None:
    """Give ``label`` to revision ``number`` of ``profile`` (``graphs.revisions.revision_label_move``),
    recorded in the audit log with ``details`` (what justified the move); returns the number that had it."""

    def audit(before: int | None, after: int) -> None:
        whose = f"{profile.project.slug}'s override of " if profile.project_id else ""
        was = f" (it was on revision {before})" if before is not None else ""
        audit_record(actor=by, action=AuditEntry.Action.AGENT_PROFILE_LABEL_MOVED, object_type="agent_profile",
                     object_id=profile.org_node, project=profile.project,
                     before={"label": label, "revision": before},
                     after={"label": label, "revision": after, **(details or {})},
                     summary=f"Labelled revision {after} of {whose}the {profile.org_node} agent profile {label}{was}")

    return revision_label_move(record=profile, label=label, number=number, by=by, label_audit=audit)
