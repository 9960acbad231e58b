"""The revision model skills and agent profiles share: a record's fields named once give its content,
the next revision's number, the text a diff compares field by field, and the conflict a stale save meets."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from graphs.domain.revisions import (
    RevisionConflict,
    RevisionField,
    revision_conflict_check,
    revision_content,
    revision_number_next,
    revision_text,
    revisions_diff,
)

FIELDS = (
    RevisionField(name="title", label="Title", line="title"),
    RevisionField(name="text", label="Text", line="text", block=True),
    RevisionField(name="owner", label="Owner", line="owner", empty="—"),
    RevisionField(name="tags", label="Tags", line="tags", empty="—", stored=lambda tags: list(tags or []),
                  text=", ".join),
)


def record(**changes) -> SimpleNamespace:
    return SimpleNamespace(**{"title": "Research", "text": "Read.\nWrite.\n", "owner": "planner", "tags": None,
                              **changes})


def content(**changes) -> dict:
    return revision_content(fields=FIELDS, source=record(**changes))


def test_a_revision_keeps_each_named_field_as_stored():
    assert content() == {"title": "Research", "text": "Read.\nWrite.\n", "owner": "planner", "tags": []}


@pytest.mark.parametrize(("latest", "number"), [(None, 1), (1, 2), (41, 42)])
def test_revisions_are_numbered_from_one(latest, number):
    assert revision_number_next(latest=latest) == number


def test_the_diff_text_has_a_line_a_field_then_the_block_field_whole():
    text = revision_text(fields=FIELDS, content=content(title="Deep   research", owner=""))

    assert text.splitlines() == ["title: Deep research", "owner: —", "tags: —", "", "text:", "Read.", "Write."]


def test_the_diff_of_two_revisions_marks_the_fields_that_changed():
    lines = revisions_diff(fields=FIELDS, old=content(), new=content(tags=["a", "b"], text="Read.\nCheck.\n"),
                           old_number=3, new_number=4)

    changed = {(line.kind, line.text) for line in lines if line.kind != "same"}
    assert changed >= {("header", "--- revision 3"), ("header", "+++ revision 4"), ("del", "-tags: —"),
                       ("add", "+tags: a, b"), ("del", "-Write."), ("add", "+Check.")}
    assert not any("title" in text for kind, text in changed)


def test_two_equal_revisions_have_no_diff():
    assert revisions_diff(fields=FIELDS, old=content(), new=content(), old_number=1, new_number=2) == []


@pytest.mark.parametrize(("base", "latest"), [(None, 5), (0, 0), (3, 3)])
def test_a_save_on_the_latest_revision_or_without_an_editor_passes(base, latest):
    revision_conflict_check(fields=FIELDS, base=base, latest=latest, theirs=content(title="Theirs"),
                            yours=content(title="Yours"))


def test_a_save_on_an_older_revision_is_refused_with_both_versions_of_each_field_that_differs():
    with pytest.raises(RevisionConflict) as refused:
        revision_conflict_check(fields=FIELDS, base=1, latest=2, theirs=content(tags=["a"], owner="coder"),
                                yours=content(tags=["a", "b"]))

    assert (refused.value.base, refused.value.latest) == (1, 2)
    assert [(f.label, f.theirs, f.yours) for f in refused.value.fields] == [
        ("Owner", "coder", "planner"), ("Tags", "a", "a, b")]
    assert "Revision 2 was saved after you opened the editor" in str(refused.value)
