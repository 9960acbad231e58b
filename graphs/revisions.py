"""Saving a record that keeps numbered revisions (a skill, an agent profile): the one transaction that
checks the editor's revision, saves the record and keeps a revision when its content changed; and the
labels its revisions carry (``production``, ``staging``): which revision runs use, a revision named by
number or label, and a label moved.

What differs between kinds (their fields, how a record is written, what else a revision stores) comes
from the caller; the rules are ``graphs.domain.revisions``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.contrib.auth.models import AbstractBaseUser
from django.db import models, transaction
from django.utils import timezone

from graphs.domain.revisions import (
    LABELS,
    RUN_LABEL,
    Content,
    RevisionField,
    RevisionUnknown,
    revision_conflict_check,
    revision_content,
    revision_number_next,
    revision_ref_parse,
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
            type(record).objects.select_for_update(no_key=True).filter(pk=record.pk).first()
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


def revision_for_runs(record: models.Model) -> models.Model | None:
    """The revision of ``record`` that runs of tasks use: the one labelled ``production``, else the newest;
    None for a record with no revision yet. The one answer planning and agent calls read."""
    return revision_pinned(record=record, ref=RUN_LABEL) if record.revisions.exists() else None


def revision_pinned(*, record: models.Model, ref: int | str) -> models.Model:
    """The revision of ``record`` that ``ref`` names: its number, or a label — ``production`` naming the
    revision runs use (the newest where none carries it). Raises ``RevisionUnknown`` when there is none."""
    named = revision_ref_parse(ref)
    if isinstance(named, int):
        revision = record.revisions.filter(number=named).first()
    else:
        labelled = record.labels.filter(label=named).select_related("revision").first()
        revision = labelled.revision if labelled is not None else None
        if revision is None and named == RUN_LABEL:
            revision = record.revisions.order_by("-number").first()
    if revision is None:
        missing = f"{record} has no revision {named}" if isinstance(named, int) else \
            f"No revision of {record} is labelled {named}"
        raise RevisionUnknown(f"{missing}: its revisions are {_numbers(record)}.")
    return revision


def revision_labels(record: models.Model) -> dict[int, list[str]]:
    """Each revision number of ``record`` that carries labels, with them in ``LABELS``' order."""
    labelled: dict[int, list[str]] = {}
    for label, number in record.labels.order_by("label").values_list("label", "revision__number"):
        labelled.setdefault(number, []).append(label)
    return {number: sorted(labels, key=LABELS.index) for number, labels in labelled.items()}


def revision_label_move(
    *, record: models.Model, label: str, number: int, by: AbstractBaseUser | None,
    label_audit: Callable[[int | None, int], None] | None = None,
) -> int | None:
    """Give ``label`` to revision ``number`` of ``record``, taking it from the revision that had it; returns
    that revision's number (None: none had it). A plain setter: whether the move is wise (a gate, an
    experiment) is its caller's to decide. ``label_audit`` is told the numbers before and after, in the
    same transaction. Raises ``RevisionUnknown`` for a label or number the record does not have."""
    if label not in LABELS:
        raise RevisionUnknown(f"{label!r} is no label: the labels are {', '.join(LABELS)}.")
    with transaction.atomic():
        # Serializes the moves of a record's labels (and its saves, which number revisions the same way).
        type(record).objects.select_for_update(no_key=True).filter(pk=record.pk).first()
        revision = revision_pinned(record=record, ref=number)
        current = record.labels.filter(label=label).select_related("revision").first()
        before = current.revision.number if current is not None else None
        if before == revision.number:
            return before
        record.labels.update_or_create(label=label, defaults={
            "revision": revision, "moved_at": timezone.now(),
            "moved_by": by if by is not None and by.is_authenticated else None})
        if label_audit is not None:
            label_audit(before, revision.number)
    return before


def _numbers(record: models.Model) -> str:
    numbers = list(record.revisions.order_by("number").values_list("number", flat=True))
    if not numbers:
        return "none yet"
    return f"{numbers[0]} to {numbers[-1]}" if len(numbers) > 2 else " and ".join(map(str, numbers))
