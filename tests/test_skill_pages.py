"""The skill administration pages: who may use them, editing with revisions, preview, status, diff, usage."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from graphs.models import Skill
from graphs.skills.revisions import skill_save
from graphs.skills.usage import skills_for_admin
from tests import factories
from tests.clients import signed_in
from tests.run_builders import planned_run

pytestmark = pytest.mark.django_db

BROKEN_TEMPLATE = "# Research\n\n```team-template\n{\"version\": 1, \"nodes\": [\n```\n"



@pytest.fixture
def skill(dana) -> Skill:
    skill = Skill(skill_id="research", name="Research", owner_org_node="planner")
    skill_save(skill=skill, body="# Research\n\nRead the filings.\n", author=dana, note="first")
    skill_save(skill=skill, body="# Research\n\nRead the filings twice.\n", author=dana, note="second")
    return skill


def skill_pages(skill: Skill) -> list[str]:
    base = f"/skills/{skill.skill_id}"
    return ["/skills/", "/skills/new/", f"{base}/", f"{base}/edit/", f"{base}/diff/", f"{base}/usage/"]


def test_a_skill_admin_sees_every_page(dana, skill):
    client = signed_in(dana)
    for url in skill_pages(skill):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("persona", ["alice", "bob", "charlie"])
def test_users_without_the_permission_get_403_on_every_page_and_action(request, persona, skill):
    client = signed_in(request.getfixturevalue(persona))
    for url in skill_pages(skill):
        assert client.get(url).status_code == 403, url
    for url in ["/skills/preview/", f"/skills/{skill.skill_id}/status/", f"/skills/{skill.skill_id}/edit/",
                "/skills/new/"]:
        assert client.post(url, {"body": "x", "status": "active", "reason": "x"}).status_code == 403, url
    assert Skill.objects.get(pk=skill.pk).status == "draft"


def test_anonymous_users_are_sent_to_sign_in(skill):
    for url in skill_pages(skill):
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url


def test_the_skills_link_is_in_the_nav_only_for_skill_admins(dana, alice):
    assert 'href="/skills/"' in signed_in(dana).get("/").content.decode()
    assert 'href="/skills/"' not in signed_in(alice).get("/").content.decode()


def test_the_list_filters_by_status_owner_and_text(dana, skill):
    factories.SkillFactory(skill_id="deploy-notes", owner_org_node="coder", status="active")
    client = signed_in(dana)

    def listed(query: str) -> bool:
        return "deploy-notes" in client.get(f"/skills/?{query}").content.decode()

    assert listed("status=active") and not listed("status=draft")
    assert listed("owner=coder") and not listed("owner=planner")
    assert listed("q=deploy") and not listed("q=filings")
    assert "research" in client.get("/skills/?q=filings").content.decode()


def test_the_list_shows_usage_counts_in_one_query(dana, skill, task, django_assert_num_queries):
    run = planned_run(task, {"nodes": [], "edges": []})
    for node_id in ("a", "b"):
        factories.ExecutionFactory(run=run, node_id=node_id, skill_ref=skill)
    factories.ExecutionFactory(skill_ref=skill)
    factories.SkillFactory.create_batch(3)
    with django_assert_num_queries(1):
        rows = {s.skill_id: s for s in skills_for_admin()}
    assert (rows["research"].revision_count, rows["research"].execution_count, rows["research"].run_count) == (2, 3, 2)


def test_creating_a_skill_saves_a_draft_with_its_first_revision(dana):
    response = signed_in(dana).post(
        "/skills/new/",
        {"skill_id": "new-skill", "name": "New", "description": "", "owner_org_node": "coder",
         "body": BROKEN_TEMPLATE, "note": "start"},
    )
    assert response.status_code == 302 and response["Location"] == "/skills/new-skill/"
    skill = Skill.objects.get(skill_id="new-skill")
    assert (skill.status, skill.source, skill.team_template) == ("draft", "console", None)
    assert skill.template_warnings[0].startswith("the team template is not valid JSON")
    assert skill.revisions.get().note == "start"


def test_a_reserved_or_taken_skill_id_is_refused(dana, skill):
    client = signed_in(dana)
    for skill_id in ("new", "preview", "research"):
        response = client.post("/skills/new/", {"skill_id": skill_id, "body": "x"})
        assert response.status_code == 400, skill_id
    assert Skill.objects.count() == 1


def edit(client: Client, skill: Skill, body: str, *, base: int) -> object:
    return client.post(
        f"/skills/{skill.skill_id}/edit/",
        {"skill_id": "ignored", "name": skill.name, "description": "", "owner_org_node": "planner", "body": body,
         "note": "edited", "base_revision": base},
    )


def test_editing_the_body_makes_the_next_revision_and_the_id_cannot_change(dana, skill):
    response = edit(signed_in(dana), skill, "# Research\r\n\r\nNew text.\r\n", base=2)
    assert response.status_code == 302
    skill.refresh_from_db()
    assert skill.skill_id == "research"
    assert skill.body == "# Research\n\nNew text.\n"
    assert skill.revisions.order_by("-number").first().number == 3


def test_saving_an_unchanged_body_makes_no_revision(dana, skill):
    edit(signed_in(dana), skill, skill.body, base=2)
    assert skill.revisions.count() == 2


def test_saving_over_a_newer_revision_is_refused_and_keeps_the_text(dana, skill):
    response = edit(signed_in(dana), skill, "# Mine\n", base=1)
    assert response.status_code == 409
    page = response.content.decode()
    assert "Revision 2 was saved after you opened the editor" in page
    assert "# Mine" in page
    assert skill.revisions.count() == 2


def test_the_preview_is_sanitized(dana):
    body = (
        "# Title\n\n<script>alert('x')</script>\n\n![tracker](https://evil.test/pixel.png)\n\n"
        "[click](javascript:alert(1)) <a href=\"https://example.test\" onclick=\"steal()\">site</a>\n"
    )
    data = signed_in(dana).post("/skills/preview/", {"body": body}).json()
    html = data["html"]
    assert "<h1>Title</h1>" in html
    assert "<script" not in html and "alert('x')" not in html
    assert "<img" not in html and "evil.test" not in html
    assert "javascript:" not in html.replace("[click](javascript:alert(1))", "")
    assert "onclick" not in html
    assert '<a href="https://example.test" rel="noopener noreferrer nofollow">site</a>' in html


def test_the_preview_reports_the_template_and_its_warnings(dana):
    client = signed_in(dana)
    broken = client.post("/skills/preview/", {"body": BROKEN_TEMPLATE}).json()
    assert broken["template_json"] == ""
    assert broken["warnings"][0].startswith("the team template is not valid JSON")
    good = '```team-template\n{"version": 1, "nodes": [{"node_id": "a", "task": "A"}]}\n```'
    assert json.loads(client.post("/skills/preview/", {"body": good}).json()["template_json"])["version"] == 1


def test_the_preview_only_answers_posts(dana):
    assert signed_in(dana).get("/skills/preview/").status_code == 405


def test_the_skill_page_shows_the_sanitized_body_and_template_warnings(dana):
    skill = Skill(skill_id="broken")
    skill_save(skill=skill, body=BROKEN_TEMPLATE + "\n<script>alert(1)</script>\n", author=dana)
    page = signed_in(dana).get("/skills/broken/").content.decode()
    assert "the team template is not valid JSON" in page
    assert "<script>alert(1)</script>" not in page


def test_a_status_change_is_recorded_with_its_reason(dana, skill):
    client = signed_in(dana)
    response = client.post(f"/skills/{skill.skill_id}/status/", {"status": "active", "reason": "reviewed by the team"})
    assert response.status_code == 302
    skill.refresh_from_db()
    assert (skill.status, skill.status_reason) == ("active", "reviewed by the team")
    page = client.get(f"/skills/{skill.skill_id}/").content.decode()
    assert "status draft → active: reviewed by the team" in page


def test_a_disallowed_status_change_is_refused_with_both_states_named(dana, skill):
    client = signed_in(dana)
    response = client.post(f"/skills/{skill.skill_id}/status/", {"status": "deprecated", "reason": "old"}, follow=True)
    assert "skill cannot go from &#x27;draft&#x27; to &#x27;deprecated&#x27;" in response.content.decode()
    assert Skill.objects.get(pk=skill.pk).status == "draft"


def test_the_diff_compares_any_two_revisions(dana, skill):
    skill_save(skill=skill, body="# Research\n\nSomething else.\n", author=dana)
    client = signed_in(dana)
    page = client.get(f"/skills/{skill.skill_id}/diff/?old=1&new=3").content.decode()
    assert '<div class="diff-line diff-del">-Read the filings.</div>' in page
    assert '<div class="diff-line diff-add">+Something else.</div>' in page
    default = client.get(f"/skills/{skill.skill_id}/diff/").content.decode()
    assert "Revision 2 → revision 3" in default


def test_the_diff_escapes_the_bodies(dana):
    skill = Skill(skill_id="html")
    skill_save(skill=skill, body="a\n", author=dana)
    skill_save(skill=skill, body="<script>alert(1)</script>\n", author=dana)
    page = signed_in(dana).get("/skills/html/diff/?old=1&new=2").content.decode()
    assert "+&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("query", ["?old=1&new=9", "?old=one&new=2", "?old=1"])
def test_a_bad_diff_link_is_a_404_page_of_the_console_offering_the_revisions(dana, skill, query, settings):
    settings.DEBUG = True  # as `make run` serves it: still the console's page, not Django's debug 404
    response = signed_in(dana).get(f"/skills/{skill.skill_id}/diff/{query}")
    page = response.content.decode()
    assert response.status_code == 404
    assert 'id="diff-problem"' in page and "has no such pair of revisions; it has 2: choose two." in page
    assert page.count('<option value="2" >r2</option>') == 2


def test_an_unknown_skill_is_404(dana):
    assert signed_in(dana).get("/skills/missing/").status_code == 404


def test_the_usage_page_shows_only_the_viewers_projects_and_counts_the_rest(dana, skill, task, project):
    project.name = "Acme Merger"
    project.save()
    task.title, task.skill = "Quarterly filings", skill
    task.save()
    run = planned_run(task, {"nodes": [], "edges": []})
    execution = factories.ExecutionFactory(run=run, node_id="collect_filings", skill_ref=skill)
    client = signed_in(dana)
    page = client.get(f"/skills/{skill.skill_id}/usage/").content.decode()
    for secret in ("collect_filings", "Quarterly filings", "Acme Merger", str(run.run_id)[:8]):
        assert secret not in page
    assert "1 run in projects you are not a member of" in page
    assert "1 node execution in projects you are not a member of" in page
    assert "1 task in projects you are not a member of" in page
    factories.member(project, "dana", role="viewer")
    page = client.get(f"/skills/{skill.skill_id}/usage/").content.decode()
    assert "Quarterly filings" in page and "Acme Merger" in page
    assert f"/executions/{execution.pk}/" in page and f"/runs/{run.run_id}/" in page
    assert f"/tasks/{task.pk}/" in page and "not a member of" not in page


def test_the_editor_documents_the_template_fields_and_the_tool_registry(dana, settings):
    settings.WORKGRAPH_TOOL_REGISTRY = {"web_fetch": "low", "deploy": "high"}
    page = signed_in(dana).get("/skills/new/").content.decode()
    help_part = page[page.index('id="template-help"'):]
    for name in ("node_id", "task", "depends_on", "requested_tools", "required_evidence", "max_tool_iterations"):
        assert f"<dt><code>{name}</code></dt>" in help_part
    assert "<code>deploy</code> <span class=\"muted\">(high)</span>" in help_part
    assert "&quot;version&quot;: 1" in help_part
