"""In a real browser against daphne: the Content-Security-Policy blocks nothing the console's pages need."""

from __future__ import annotations

import pytest

from graphs.models import Skill
from graphs.skills.revisions import skill_save
from tests import factories
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.factories import RunFactory

pytestmark = pytest.mark.django_db(transaction=True)

RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


def test_the_pages_the_graph_the_skill_editor_and_the_api_docs_work_under_the_policy(
    chromium, console_server, project, task
):
    dana = factories.member(project, "dana", role="lead")
    dana.user_permissions.add(*factories.skill_admin("dana").user_permissions.all())
    skill_save(skill=Skill(skill_id="research", name="Research"), body="# Research\n", author=dana)
    manifest = {"nodes": [{"node_id": "a", "subagent_type": "coder"},
                          {"node_id": "b", "subagent_type": "coder", "depends_on": ["a"]}], "edges": []}
    run = RunFactory(task=task, graph_manifest=manifest)
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    console_errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and console_errors.append(message.text))
    page.add_init_script(RECORD_VIOLATIONS)

    violations: dict[str, list[str]] = {}
    sign_in(page, f"{console_server}/", "dana")
    page.wait_for_selector("h1:has-text('Dashboard')")
    violations["dashboard"] = page.evaluate("window.__violations")
    page.goto(f"{console_server}/runs/{run.run_id}/")
    page.wait_for_selector("#dag[data-painted='true']")
    page.wait_for_function("() => document.querySelector('#dag text')?.style.font !== ''")
    violations["graph"] = page.evaluate("window.__violations")
    page.goto(f"{console_server}/skills/research/edit/")
    page.fill("textarea[name=body]", "# Preview *works*")
    page.wait_for_selector("#skill-preview em:has-text('works')")
    violations["skill editor"] = page.evaluate("window.__violations")
    page.goto(f"{console_server}/api/docs")
    page.wait_for_selector(".swagger-ui .info")
    violations["api docs"] = page.evaluate("window.__violations")

    assert violations == {name: [] for name in violations}
    assert [error for error in console_errors if "Content Security Policy" in error] == []
