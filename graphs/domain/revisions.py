"""A text with numbered revisions, as skills and agent profiles keep it: what a revision holds, its number,
when a save makes one, the diff of two, and the rule that keeps an edit from undoing another.

Each kind of record names its fields once (``RevisionField``, in the order its editor shows them); the
rest is shared. Pure: records and revisions are read through their attributes, and the texts a page
shows are plain strings, for the template to escape.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphs.errors import WorkGraphError

Content = dict[str, Any]
# The names a revision of a record can carry, each by one revision of the record at a time. Runs of tasks
# use the revision labelled RUN_LABEL, or the newest where none is; staging names the one being tried.
LABELS = ("production", "staging")
RUN_LABEL = "production"


def _kept(value: Any) -> Any:
    return value


def _text(value: Any) -> str:
    return str(value)


@dataclass(frozen=True)
class RevisionField:
    """One field a revision copies of its record.

    ``label`` is the editor's, for a conflict; ``line`` starts the field's line in a diff, where an empty
    text reads ``empty``. The ``block`` field (a body, instructions) closes the diff text whole, after the
    one-line fields. ``stored`` is the value a revision keeps; ``text`` the value as its editor writes it.
    """

    name: str
    label: str
    line: str
    empty: str = ""
    block: bool = False
    stored: Callable[[Any], Any] = _kept
    text: Callable[[Any], str] = _text


def revision_content(*, fields: tuple[RevisionField, ...], source: object) -> Content:
    """The content of a record or a revision, as a revision stores it; two revisions differ when it does."""
    return {field.name: field.stored(getattr(source, field.name)) for field in fields}


def revision_number_next(*, latest: int | None) -> int:
    """The number the next revision takes: revisions count from 1, ``latest`` None when there is none."""
    return (latest or 0) + 1


def revision_fields_text(*, fields: tuple[RevisionField, ...], content: Mapping[str, Any]) -> dict[str, str]:
    """``content`` as text by the label its editor gives each field, in the editor's order."""
    return {field.label: field.text(content[field.name]) for field in fields}


def revision_text(*, fields: tuple[RevisionField, ...], content: Mapping[str, Any]) -> str:
    """``content`` as the lines a diff compares: one line a field, then the block field whole."""
    lines = [f"{field.line}: {' '.join(field.text(content[field.name]).split()) or field.empty}"
             for field in fields if not field.block]
    for field in fields:
        if field.block:
            lines += ["", f"{field.line}:", field.text(content[field.name])]
    return "\n".join(lines)


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "header", "hunk", "add", "del" or "same"
    text: str


def revisions_diff(
    *, fields: tuple[RevisionField, ...], old: Mapping[str, Any], new: Mapping[str, Any], old_number: int,
    new_number: int,
) -> list[DiffLine]:
    """A unified diff from revision ``old_number``'s content to ``new_number``'s, field by field."""
    lines = difflib.unified_diff(
        revision_text(fields=fields, content=old).splitlines(), revision_text(fields=fields, content=new).splitlines(),
        fromfile=f"revision {old_number}", tofile=f"revision {new_number}", lineterm="",
    )
    return [DiffLine(kind=_unified_kind(line), text=line) for line in lines]


def _unified_kind(line: str) -> str:
    if line.startswith(("---", "+++")):
        return "header"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "same")


@dataclass(frozen=True)
class FieldVersions:
    """One field as the newer revision has it (``theirs``) and as the refused save had it (``yours``)."""

    label: str
    theirs: str
    yours: str


class RevisionConflict(WorkGraphError):
    """A save made on revision ``base`` while revision ``latest`` exists: nothing was saved."""

    def __init__(self, *, base: int, latest: int, fields: list[FieldVersions]) -> None:
        self.base = base
        self.latest = latest
        self.fields = fields
        super().__init__(f"Revision {latest} was saved after you opened the editor (you started from revision "
                         f"{base}). Compare it with your changes, then save again.")


def revision_conflict_check(
    *, fields: tuple[RevisionField, ...], base: int | None, latest: int, theirs: Mapping[str, Any] | None,
    yours: Mapping[str, Any],
) -> None:
    """Raise ``RevisionConflict`` when a save made on revision ``base`` would overwrite a newer ``latest``.

    ``base`` None means the caller edits without an editor's revision (an import, the Django admin): no
    check. ``latest`` is 0 for a record with no revision yet, ``theirs`` its content (None with none).
    The conflict lists, in the editor's order, the fields whose text differs.
    """
    if base is None or base >= latest:
        return
    theirs_text = revision_fields_text(fields=fields, content=theirs) if theirs is not None else {}
    yours_text = revision_fields_text(fields=fields, content=yours)
    versions = [FieldVersions(label=label, theirs=text, yours=yours_text[label])
                for label, text in theirs_text.items() if text != yours_text[label]]
    raise RevisionConflict(base=base, latest=latest, fields=versions)


class RevisionUnknown(ValueError):
    """A revision was named (by number or label) that the record does not have."""


def revision_ref_parse(ref: int | str) -> int | str:
    """A revision named by its number (``3``, ``"3"``) or a label (``production``, ``staging``): the number as
    an int, or the label. Raises ``RevisionUnknown`` for anything else."""
    if isinstance(ref, bool):
        raise RevisionUnknown(f"{ref!r} names no revision: give its number or a label ({', '.join(LABELS)}).")
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdecimal() and ref.isascii()):
        if int(ref) >= 1:
            return int(ref)
    elif ref in LABELS:
        return ref
    raise RevisionUnknown(f"{ref!r} names no revision: give its number or a label ({', '.join(LABELS)}).")
