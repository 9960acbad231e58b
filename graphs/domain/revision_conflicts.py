"""The rule that keeps an edit from undoing another: a save names the revision it was made on, and when a
newer one exists nothing is saved; the conflict carries both versions of every field they differ in.

Skills and agent profiles share it (graphs.skills.revisions, graphs.profiles.revisions). Pure: the
callers give each version as text by field, in the order a page shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphs.errors import WorkGraphError


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


def revision_conflict_check(*, base: int | None, latest: int, theirs: dict[str, str], yours: dict[str, str]) -> None:
    """Raise ``RevisionConflict`` when a save made on revision ``base`` would overwrite a newer ``latest``.

    ``base`` None means the caller edits without an editor's revision (an import, the Django admin): no
    check. ``latest`` is 0 for a record with no revision yet. ``theirs`` and ``yours`` map each field's
    label to its text; the conflict lists those whose text differs.
    """
    if base is None or base >= latest:
        return
    fields = [FieldVersions(label=label, theirs=text, yours=yours.get(label, ""))
              for label, text in theirs.items() if text != yours.get(label, "")]
    raise RevisionConflict(base=base, latest=latest, fields=fields)
