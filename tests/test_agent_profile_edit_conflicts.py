"""An agent profile edit carries the revision it was made on, for every field: a save over a newer revision
saves nothing and shows both versions, the typed text kept in the form; saving again then replaces it."""

from __future__ import annotations

import html

import pytest

from graphs.domain.revisions import RevisionConflict
from graphs.models import AgentProfile
from graphs.profiles.resolve import profile_console
from graphs.profiles.revisions import profile_save
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

# Each field of the editor: the value another tab saves, the value this tab typed, and the label and
# texts the conflict shows them by. A checkbox has two values: this tab keeps it as it was.
EDITS = {
    "description": ("Theirs.", "Mine.", "Description", "Theirs.", "Mine."),
    "instructions": ("# Their coder\n", "# My coder\n", "Instructions", "# Their coder\n", "# My coder\n"),
    "model": ("sonnet", "opus", "Model", "sonnet", "opus"),
    "effort": ("low", "high", "Effort", "low", "high"),
    "permission_mode": ("plan", "acceptEdits", "Permission mode", "plan", "acceptEdits"),
    "max_turns": ("7", "9", "Max turns", "7", "9"),
    "repository_definition_first": ("on", None, "The repository's own definition first", "yes", "no"),
    "allowed_tools_text": ("Read, Grep", "Read, Write", "Allowed tools", "Read, Grep", "Read, Write"),
    "disallowed_tools_text": ("WebFetch", "Bash", "Disallowed tools", "WebFetch", "Bash"),
}


@pytest.fixture
def coder(db) -> AgentProfile:
    return profile_console("coder")


def editor_form(profile: AgentProfile, **changes) -> dict:
    """What the edit page posts: the profile as it was when the page was opened, with ``changes`` typed."""
    fields = {
        "description": profile.description, "instructions": profile.instructions, "model": profile.model,
        "effort": profile.effort, "permission_mode": profile.permission_mode, "max_turns": profile.max_turns or "",
        "allowed_tools_text": ", ".join(profile.allowed_tools), "disallowed_tools_text": "",
        "base_revision": profile.revisions.order_by("-number").first().number, "note": "",
    }
    fields = fields | changes
    return {name: value for name, value in fields.items() if value is not None}


@pytest.mark.parametrize("field", EDITS)
def test_a_second_tab_saving_any_field_over_a_newer_revision_saves_nothing_and_shows_both(dana, coder, field):
    theirs, mine, label, theirs_text, mine_text = EDITS[field]
    stale = editor_form(coder, **{field: mine})

    saved = signed_in(dana).post("/agents/coder/edit/", editor_form(coder, **{field: theirs}))
    after_theirs = profile_console("coder")
    refused = signed_in(dana).post("/agents/coder/edit/", stale)

    assert saved.status_code == 302
    assert refused.status_code == 409
    assert coder.revisions.count() == 2
    assert AgentProfile.objects.get(pk=coder.pk).updated_at == after_theirs.updated_at
    page = refused.content.decode()
    assert "Revision 2 was saved after you opened the editor" in page
    start = page.index('id="revision-conflict"')
    conflict = page[start:page.index("</section>", start)]
    block = conflict[conflict.index(f'data-field="{html.escape(label)}"'):]
    assert f'data-version="theirs">{html.escape(theirs_text)}' in block
    assert f'data-version="yours">{html.escape(mine_text)}' in block


def test_the_typed_text_stays_in_the_form_and_saving_again_replaces_the_newer_revision(dana, coder):
    stale = editor_form(coder, instructions="# My coder\n\nKeep this.\n")
    signed_in(dana).post("/agents/coder/edit/", editor_form(coder, model="sonnet"))
    client = signed_in(dana)

    refused = client.post("/agents/coder/edit/", stale).content.decode()
    assert "Keep this." in refused[refused.index('name="instructions"'):]
    assert 'name="base_revision" value="2"' in refused

    again = client.post("/agents/coder/edit/", stale | {"base_revision": 2})
    assert again.status_code == 302
    saved = AgentProfile.objects.get(pk=coder.pk)
    assert (saved.instructions, saved.model) == ("# My coder\n\nKeep this.\n", coder.model)


def test_the_domain_refuses_a_stale_save_and_names_only_the_fields_that_differ(coder):
    stale = AgentProfile.objects.get(pk=coder.pk)
    coder.model = "sonnet"
    profile_save(profile=coder, author=None)
    stale.max_turns = 3

    with pytest.raises(RevisionConflict) as raised:
        profile_save(profile=stale, author=None, base_revision=1)

    assert (raised.value.base, raised.value.latest) == (1, 2)
    assert [(f.label, f.theirs, f.yours) for f in raised.value.fields] == [
        ("Model", "sonnet", stale.model), ("Max turns", "", "3")]
    assert AgentProfile.objects.get(pk=coder.pk).max_turns is None


def test_a_save_on_the_latest_revision_is_no_conflict(coder):
    coder.model = "sonnet"
    assert profile_save(profile=coder, author=None, base_revision=1).number == 2
