"""Saving an agent profile, each change kept as an ``AgentProfileRevision``, and the diff of two revisions.

Every change of a profile goes through ``profile_save``: the console pages, the Django admin and the
shipped profiles created on first use all call it. An editor names the revision it was made on: a save
over a newer one is a ``RevisionConflict`` and saves nothing.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from graphs.domain.revision_conflicts import revision_conflict_check
from graphs.domain.text_diffs import DiffLine, revisions_diff
from graphs.models import AgentProfile, AgentProfileRevision

# What a revision copies of its profile, and what makes two revisions differ.
CONTENT_FIELDS = (
    "description", "instructions", "model", "effort", "allowed_tools", "disallowed_tools", "max_turns",
    "permission_mode", "repository_definition_first",
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
    with transaction.atomic():
        if profile.pk is not None:
            # Serializes revision numbering, and the conflict check, between concurrent saves of the profile.
            AgentProfile.objects.select_for_update().filter(pk=profile.pk).first()
        latest = profile.revisions.order_by("-number").first() if profile.pk is not None else None
        content = profile_content(profile)
        revision_conflict_check(
            base=base_revision, latest=latest.number if latest else 0,
            theirs=profile_fields_text(profile_content(latest)) if latest else {},
            yours=profile_fields_text(content),
        )
        profile.save()
        if latest is not None and profile_content(latest) == content:
            return None
        return AgentProfileRevision.objects.create(
            profile=profile, number=(latest.number + 1) if latest else 1, **content,
            author=author if author and author.is_authenticated else None, note=note,
        )


def profile_content(source: AgentProfile | AgentProfileRevision) -> dict:
    """The content fields of a profile or a revision, as a revision stores them."""
    content = {name: getattr(source, name) for name in CONTENT_FIELDS}
    content["allowed_tools"] = list(content["allowed_tools"] or [])
    content["disallowed_tools"] = list(content["disallowed_tools"] or [])
    return content


def profile_fields_text(content: dict) -> dict[str, str]:
    """A profile's content as text by the label its editor gives each field."""
    return {
        "Description": content["description"],
        "Instructions": content["instructions"],
        "Model": content["model"],
        "Effort": content["effort"],
        "Permission mode": content["permission_mode"],
        "Max turns": "" if content["max_turns"] is None else str(content["max_turns"]),
        "The repository's own definition first": "yes" if content["repository_definition_first"] else "no",
        "Allowed tools": ", ".join(content["allowed_tools"]),
        "Disallowed tools": ", ".join(content["disallowed_tools"]),
    }


def profile_text(revision: AgentProfile | AgentProfileRevision) -> str:
    """A revision as the lines its diff compares: one line a setting, then the instructions."""
    content = profile_content(revision)
    settings_lines = [
        f"description: {' '.join(content['description'].split())}",
        f"model: {content['model'] or '(runner default)'}",
        f"effort: {content['effort'] or '(model default)'}",
        f"permission mode: {content['permission_mode']}",
        f"allowed tools: {', '.join(content['allowed_tools']) or '—'}",
        f"disallowed tools: {', '.join(content['disallowed_tools']) or '—'}",
        f"max turns: {content['max_turns'] or '—'}",
        f"repository definition first: {'yes' if content['repository_definition_first'] else 'no'}",
    ]
    return "\n".join([*settings_lines, "", "instructions:", content["instructions"]])


def profile_revisions_diff(*, old: AgentProfileRevision, new: AgentProfileRevision) -> list[DiffLine]:
    """A unified diff from ``old`` to ``new``, settings and instructions, for the page to render escaped."""
    return revisions_diff(old=profile_text(old), new=profile_text(new), old_number=old.number, new_number=new.number)

