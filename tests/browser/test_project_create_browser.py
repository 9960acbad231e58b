"""In a real browser: someone allowed to add projects creates one on a fresh git repository from the
dashboard, sees the folder checked as they type (a git repository, its base ref's commit), and lands on
the project's page as its lead."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from graphs.models import Project, ProjectMembership
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.repos import git, repository_create


@pytest.mark.django_db(transaction=True)
def test_a_user_creates_a_project_on_a_fresh_repository_and_lands_on_its_page(chromium, live_server, tmp_path):
    factories.project_creator("erin")
    repo = repository_create(tmp_path / "shop")
    head = git(repo, "rev-parse", "HEAD").strip()
    page = chromium.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{live_server.url}/login/", "erin")

    page.click("#new-project")
    page.wait_for_url("**/projects/new/")
    page.fill("input[name=slug]", "shop")
    page.fill("input[name=name]", "Shop")
    page.fill("input[name=target_folder]", str(tmp_path))
    check = page.locator("#folder-check")
    expect(check.locator("[data-fact=not-repository]")).to_contain_text("neither isolated")
    page.fill("input[name=target_folder]", str(repo))
    page.fill("input[name=base_ref]", "main")
    expect(check.locator("[data-fact=repository]")).to_contain_text("A git repository")
    expect(check.locator("[data-fact=commit]")).to_contain_text(f"Base ref main → commit {head}")
    expect(page.locator("#folder-check-verdict")).to_have_text("the folder can be used")
    page.screenshot(path=str(ARTIFACTS / "project-new-folder-check.png"), full_page=True)

    page.click("#project-form button[type=submit]")
    page.wait_for_url("**/projects/shop/")
    expect(page.locator("h1")).to_have_text("Shop")
    expect(page.locator(".messages")).to_contain_text("Project Shop created; you lead it.")
    expect(page.locator("#project-settings-link")).to_be_visible()
    project = Project.objects.get(slug="shop")
    assert (project.target_folder, project.base_ref) == (str(repo), "main")
    assert ProjectMembership.objects.get(project=project).role == "lead"
