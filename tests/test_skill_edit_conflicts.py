"""A skill edit carries the revision it was made on, for every field: a save over a newer revision saves
nothing and shows both versions, the typed text kept in the form; saving again then replaces it."""

from __future__ import annotations

import html

import pytest

from graphs.domain.revisions import RevisionConflict
from graphs.models import Skill
from graphs.skills.revisions import skill_content, skill_save
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

# Each field of the editor: the value another tab saves, and the value this tab typed.
EDITS = {
    "name": ("Their name", "My name"),
    "description": ("Their description.", "My description."),
    "owner_org_node": ("coder", "validator"),
    "body": ("# Research\n\nTheir text.\n", "# Research\n\nMy text.\n"),
}
LABELS = {"name": "Name", "description": "Description", "owner_org_node": "Owner org node", "body": "Body"}


@pytest.fixture
def skill(dana) -> Skill:
    skill = Skill(skill_id="research", name="Research", description="Reads filings.", owner_org_node="planner")
    skill_save(skill=skill, body="# Research\n\nRead the filings.\n", author=dana, note="first")
    return skill


def editor_form(skill: Skill, **changes) -> dict:
    """What the edit page posts: the skill as it was when the page was opened, with ``changes`` typed."""
    latest = skill.revisions.order_by("-number").first()
    return {**skill_content(latest), "skill_id": skill.skill_id, "note": "", "base_revision": latest.number, **changes}


@pytest.mark.parametrize("field", EDITS)
def test_a_second_tab_saving_any_field_over_a_newer_revision_saves_nothing_and_shows_both(dana, skill, field):
    theirs, mine = EDITS[field]
    first, second = signed_in(dana), signed_in(dana)
    stale = editor_form(skill, **{field: mine})

    saved = first.post("/skills/research/edit/", editor_form(skill, **{field: theirs}))
    refused = second.post("/skills/research/edit/", stale)

    assert saved.status_code == 302
    assert refused.status_code == 409
    assert getattr(Skill.objects.get(pk=skill.pk), field) == theirs
    assert skill.revisions.count() == 2
    page = refused.content.decode()
    assert "Revision 2 was saved after you opened the editor" in page
    conflict = page[page.index('id="revision-conflict"'):page.index("</section>", page.index('id="revision-conflict"'))]
    assert f'data-field="{LABELS[field]}"' in conflict
    assert html.escape(theirs) in conflict and html.escape(mine) in conflict
    assert html.escape(mine) in page[page.index("</section>"):], "the typed text stays in the form"


@pytest.mark.parametrize("field", EDITS)
def test_a_tab_saving_its_unchanged_copy_does_not_undo_anothers_edit_of_any_field(dana, skill, field):
    theirs, _ = EDITS[field]
    untouched = editor_form(skill)
    signed_in(dana).post("/skills/research/edit/", editor_form(skill, **{field: theirs}))

    refused = signed_in(dana).post("/skills/research/edit/", untouched | {"note": "only a note"})

    assert refused.status_code == 409
    assert getattr(Skill.objects.get(pk=skill.pk), field) == theirs


def test_saving_again_from_the_conflict_replaces_the_newer_revision_knowingly(dana, skill):
    signed_in(dana).post("/skills/research/edit/", editor_form(skill, description="Theirs."))
    client = signed_in(dana)
    refused = client.post("/skills/research/edit/", editor_form(skill, description="Mine.") | {"base_revision": 1})

    assert 'name="base_revision" value="2"' in refused.content.decode()
    again = client.post("/skills/research/edit/", editor_form(skill, description="Mine."))

    assert again.status_code == 302
    assert Skill.objects.get(pk=skill.pk).description == "Mine."
    assert skill.revisions.order_by("-number").first().number == 3


def test_a_description_change_alone_makes_a_revision(dana, skill):
    response = signed_in(dana).post("/skills/research/edit/", editor_form(skill, description="Reads filings twice."))

    assert response.status_code == 302
    latest = skill.revisions.order_by("-number").first()
    assert (latest.number, latest.description) == (2, "Reads filings twice.")


def test_the_domain_refuses_a_stale_save_and_names_only_the_fields_that_differ(dana, skill):
    stale = Skill.objects.get(pk=skill.pk)
    skill.name = "Theirs"
    skill_save(skill=skill, body=skill.body, author=dana)
    stale.description = "Mine."

    with pytest.raises(RevisionConflict) as raised:
        skill_save(skill=stale, body=stale.body, author=dana, base_revision=1)

    assert (raised.value.base, raised.value.latest) == (1, 2)
    assert [(f.label, f.theirs, f.yours) for f in raised.value.fields] == [
        ("Name", "Theirs", "Research"), ("Description", "Reads filings.", "Mine.")]
    assert Skill.objects.get(pk=skill.pk).description == "Reads filings."


def test_a_skill_without_revisions_is_guarded_from_revision_zero(dana):
    skill = factories.SkillFactory()
    skill_save(skill=Skill.objects.get(pk=skill.pk), body="# Theirs\n", author=dana, base_revision=0)

    with pytest.raises(RevisionConflict):
        skill_save(skill=skill, body="# Mine\n", author=dana, base_revision=0)
    assert Skill.objects.get(pk=skill.pk).body == "# Theirs\n"


def test_the_conflict_shows_both_versions_escaped(dana, skill):
    signed_in(dana).post("/skills/research/edit/", editor_form(skill, body="<script>alert('theirs')</script>\n"))

    page = signed_in(dana).post("/skills/research/edit/", editor_form(skill, body="<img src=x onerror=alert(1)>\n")
                                | {"base_revision": 1}).content.decode()

    assert "<script>alert('theirs')" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#x27;theirs&#x27;)&lt;/script&gt;" in page
