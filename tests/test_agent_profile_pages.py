"""The agent profile pages: who may use them, editing with revisions and a sanitized preview, the diff, a
project's override, clear messages for bad input, and the attempt page's link to its profile revision."""

from __future__ import annotations

import pytest

from graphs.models import AgentProfile, AgentProfileRevision
from graphs.profiles.resolve import profile_console
from graphs.profiles.revisions import profile_save
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

HOSTILE = "# Coder\n\n<script>alert('x')</script><img src=x onerror=alert(1)>\n\n**Be careful.**\n"


def _form(profile: AgentProfile, **changes) -> dict:
    fields = {
        "description": profile.description, "instructions": profile.instructions, "model": profile.model,
        "effort": profile.effort, "permission_mode": profile.permission_mode, "max_turns": profile.max_turns or "",
        "allowed_tools_text": ", ".join(profile.allowed_tools), "disallowed_tools_text": "",
        "base_revision": profile.revisions.order_by("-number").first().number, "note": "",
    }
    return fields | changes


def test_a_skill_admin_sees_the_shipped_profiles_on_a_fresh_install(dana):
    page = signed_in(dana).get("/agents/")

    assert page.status_code == 200
    for org_node in ("planner", "coder", "validator"):
        assert f'href="/agents/{org_node}/"' in page.text
    assert "dontAsk" in page.text


@pytest.mark.parametrize("persona", ["alice", "charlie"])
def test_users_without_the_skill_permission_get_403_and_change_nothing(request, persona):
    coder = profile_console("coder")
    client = signed_in(request.getfixturevalue(persona))

    for url in ["/agents/", "/agents/new/", "/agents/coder/", "/agents/coder/edit/", "/agents/coder/diff/",
                "/agents/coder/revisions/1/"]:
        assert client.get(url).status_code == 403, url
    assert client.post("/agents/coder/edit/", _form(coder, model="x")).status_code == 403
    assert AgentProfileRevision.objects.filter(profile=coder).count() == 1


def test_saving_a_change_makes_a_revision_whose_diff_the_page_shows(dana):
    client = signed_in(dana)
    coder = profile_console("coder")

    saved = client.post("/agents/coder/edit/", _form(coder, model="claude-sonnet-4-5", permission_mode="acceptEdits",
                                                     note="pin the model"))
    diff = client.get("/agents/coder/diff/")

    assert saved.status_code == 302
    assert coder.revisions.count() == 2 and coder.revisions.get(number=2).note == "pin the model"
    assert '<div class="diff-line diff-add">+model: claude-sonnet-4-5</div>' in diff.text
    assert '<div class="diff-line diff-del">-permission mode: dontAsk</div>' in diff.text


def test_the_preview_and_the_profile_page_render_instructions_sanitized(dana):
    client = signed_in(dana)
    coder = profile_console("coder")

    preview = client.post("/agents/coder/edit/", _form(coder, instructions=HOSTILE, preview="1"))
    client.post("/agents/coder/edit/", _form(coder, instructions=HOSTILE))
    detail = client.get("/agents/coder/")
    revision = client.get("/agents/coder/revisions/2/")

    assert coder.revisions.count() == 2
    for page, block in ((preview, "profile-preview"), (detail, "instructions"), (revision, "instructions")):
        rendered = page.text.split(f'id="{block}">', 1)[1].split("</div>", 1)[0]
        assert "<strong>Be careful.</strong>" in rendered
        assert "<script" not in rendered and "onerror" not in rendered and "<img" not in rendered
    assert "<script>alert" not in preview.text + detail.text + revision.text


def test_bad_input_is_refused_with_a_clear_message_and_nothing_saved(dana):
    client = signed_in(dana)
    coder = profile_console("coder")

    cases = {
        "allowed_tools_text": ("Read, rm -rf /", "Not a tool rule: rm -rf /"),
        "permission_mode": ("yolo", "Select a valid choice"),
        "model": ("--dangerously-skip-permissions", "A model name is letters"),
        "max_turns": ("0", "greater than or equal to 1"),
        "description": ("a\x00b", "Null characters are not allowed"),
        "instructions": ("x" * 30_001, "at most 30000 characters"),
    }
    for field, (value, message) in cases.items():
        page = client.post("/agents/coder/edit/", _form(coder, **{field: value}))
        assert page.status_code == 400, field
        assert message in page.text, field
    assert coder.revisions.count() == 1


def test_a_save_over_a_newer_revision_is_refused(dana):
    client = signed_in(dana)
    coder = profile_console("coder")
    stale = _form(coder, model="mine")
    coder.model = "theirs"
    profile_save(profile=coder, author=None)

    page = client.post("/agents/coder/edit/", stale)

    assert page.status_code == 409 and "Revision 2 was saved after you opened the editor" in page.text
    assert AgentProfile.objects.get(pk=coder.pk).model == "theirs"


def test_a_new_org_node_gets_a_profile_and_a_taken_or_bad_name_is_refused(dana):
    client = signed_in(dana)
    coder = profile_console("coder")
    form = _form(coder) | {"org_node": "reviewer", "instructions": "You review."}

    created = client.post("/agents/new/", form)
    taken = client.post("/agents/new/", form)
    bad = client.post("/agents/new/", form | {"org_node": "no spaces"})

    assert created.status_code == 302 and created["Location"] == "/agents/reviewer/"
    assert AgentProfile.objects.get(org_node="reviewer").revisions.get().instructions == "You review."
    assert taken.status_code == 400 and "reviewer already has a profile" in taken.text
    assert bad.status_code == 400


def test_a_project_override_is_started_edited_and_removed(dana, project):
    client = signed_in(dana)
    coder = profile_console("coder")

    started = client.post("/agents/coder/override/", {"project": project.slug})
    override = AgentProfile.objects.get(org_node="coder", project=project)
    edited = client.post(f"/agents/coder/projects/{project.slug}/edit/", _form(override, model="claude-opus-4-1"))
    page = client.get(f"/agents/coder/projects/{project.slug}/")
    console_page = client.get("/agents/coder/")
    revisions = override.revisions.count()
    removed = client.post(f"/agents/coder/projects/{project.slug}/delete/")

    assert started["Location"] == f"/agents/coder/projects/{project.slug}/edit/"
    assert edited.status_code == 302 and revisions == 2
    assert "claude-opus-4-1" in page.text and "override" in page.text
    assert f'href="/agents/coder/projects/{project.slug}/"' in console_page.text
    assert removed.status_code == 302 and not AgentProfile.objects.filter(project=project).exists()
    assert AgentProfile.objects.get(pk=coder.pk).model == ""


def test_an_unknown_project_or_profile_answers_clearly(dana):
    client = signed_in(dana)
    profile_console("coder")

    unknown_project = client.post("/agents/coder/override/", {"project": "nope"}, follow=True)

    assert "Choose one of the projects listed." in unknown_project.text
    assert client.get("/agents/nobody/").status_code == 404
    assert client.get("/agents/coder/revisions/9/").status_code == 404
    assert client.get("/agents/coder/diff/?old=1&new=7").status_code == 404


def test_the_attempt_page_links_the_profile_revision_it_ran_with_for_profile_admins(alice, dana, project):
    revision = profile_console("coder").revisions.get()
    execution = factories.ExecutionFactory(run__task__project=project, subagent_type="coder",
                                           profile_revision=revision)
    factories.member(project, "dana", role="viewer")

    admin_page = signed_in(dana).get(f"/executions/{execution.pk}/")
    lead_page = signed_in(alice).get(f"/executions/{execution.pk}/")

    assert '<a href="/agents/coder/revisions/1/" class="profile-revision">coder r1</a>' in admin_page.text
    assert "coder r1" in lead_page.text and 'class="profile-revision"' not in lead_page.text


def test_the_planning_page_names_the_profile_revision_each_planning_call_ran_with(dana, project):
    revision = profile_console("planner").revisions.get()
    execution = factories.ExecutionFactory(run__task__project=project, node_id="__planning__", subagent_type="planner",
                                           profile_revision=revision)
    factories.member(project, "dana", role="viewer")

    page = signed_in(dana).get(f"/runs/{execution.run_id}/planning/")

    assert '(<a href="/agents/planner/revisions/1/" class="profile-revision">planner r1</a>)' in page.text
