"""Saving a record that keeps numbered revisions (a skill, an agent profile): the one transaction that
checks the editor's revision, saves the record and keeps a revision when its content changed.

What differs between kinds (their fields, how a record is written, what else a revision stores) comes
from the caller; the rules are ``graphs.domain.revisions``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import models, transaction

from graphs.domain.revisions import (
    Content,
    RevisionField,
    revision_conflict_check,
    revision_content,
    revision_number_next,
)

Revision = TypeVar("Revision", bound=models.Model)


def revision_save(
    *, record: models.Model, fields: tuple[RevisionField, ...], base_revision: int | None,
    record_write: Callable[[], None], revision_create: Callable[[int, Content], Revision],
    revision_audit: Callable[[Revision, Content | None, Content], None] | None = None,
) -> Revision | None:
    """Write ``record`` with ``record_write``, and keep a revision of its content when it changed.

    ``record`` reaches its revisions as ``record.revisions``. A revision is made, by ``revision_create``
    with its number and content, when the content differs from the latest revision's or the record has
    none yet; returns it, or None when nothing changed. ``base_revision`` is the revision an editor was
    opened on (0: none yet): when a newer one exists, raises ``RevisionConflict`` and writes nothing.
    ``revision_audit`` is told of each revision made, with the content before (None: the first) and
    after, in the same transaction, so the audit log's entry lands with it or not at all.
    """
    with transaction.atomic():
        if record.pk is not None:
            # Serializes revision numbering, and the conflict check, between concurrent saves of the record.
            type(record).objects.select_for_update().filter(pk=record.pk).first()
        latest = record.revisions.order_by("-number").first() if record.pk is not None else None
        content = revision_content(fields=fields, source=record)
        theirs = revision_content(fields=fields, source=latest) if latest is not None else None
        revision_conflict_check(fields=fields, base=base_revision, latest=latest.number if latest else 0,
                                theirs=theirs, yours=content)
        record_write()
        if theirs == content:
            return None
        revision = revision_create(revision_number_next(latest=latest.number if latest else None), content)
        if revision_audit is not None:
            revision_audit(revision, theirs, content)
        return revision
