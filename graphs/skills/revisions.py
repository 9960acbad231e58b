"""Saving a skill's body, each change kept as a ``SkillRevision``, and the diff of two revisions.

Every change of a skill's body goes through ``skill_save``, which re-parses the team template and keeps a
``SkillRevision``; the console pages, the Django admin and ``import_skills`` all call it.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from graphs.domain.text_diffs import DiffLine, revisions_diff
from graphs.models import Skill, SkillRevision
from graphs.skills.templates import team_template_parse

# What skill_save writes to an existing skill. Status moves only through skill_status_change, and the
# engine flags defects concurrently: a skill loaded before either happened must not write them back.
_SAVED_FIELDS = [
    "name", "description", "owner_org_node", "file_path", "source", "current_git_commit_sha", "body",
    "team_template", "template_warnings", "updated_at",
]


def skill_save(
    *, skill: Skill, body: str, author: AbstractBaseUser | None, note: str = "", git_commit_sha: str = ""
) -> SkillRevision | None:
    """Save ``skill`` (new or existing; name, description, owner and source as the caller set them) with ``body``.

    The team template is parsed again every time. A revision is created when the body differs from
    the latest revision's, or when the skill has none yet; returns it, or None when the body is as
    the latest revision has it.
    """
    # Browsers send textarea lines ending in CRLF; unnormalized, every save would look like a change.
    body = body.replace("\r\n", "\n")
    parsed = team_template_parse(body)
    skill.body = body
    skill.team_template = parsed.template
    skill.template_warnings = parsed.warnings
    if git_commit_sha:
        skill.current_git_commit_sha = git_commit_sha
    with transaction.atomic():
        if skill.pk is not None:
            # Serializes revision numbering between concurrent saves of the same skill.
            Skill.objects.select_for_update().filter(pk=skill.pk).first()
            skill.save(update_fields=_SAVED_FIELDS)
        else:
            skill.save()
        latest = skill.revisions.order_by("-number").first()
        if latest is not None and latest.body == body:
            return None
        return SkillRevision.objects.create(
            skill=skill, number=(latest.number + 1) if latest else 1, body=body,
            git_commit_sha=git_commit_sha, author=author if author and author.is_authenticated else None,
            note=note,
        )



def skill_revisions_diff(*, old: SkillRevision, new: SkillRevision) -> list[DiffLine]:
    """A unified diff from ``old`` to ``new``, line by line, for the page to render escaped."""
    return revisions_diff(old=old.body, new=new.body, old_number=old.number, new_number=new.number)

