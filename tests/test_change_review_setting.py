"""Whether a project requires change review is one of its settings, off unless chosen: in the projects API
(created, read, edited), on its settings page and its page, and in the admin."""

from __future__ import annotations

import json

import pytest
from django.contrib.admin.sites import site
from django.urls import reverse

from graphs.models import AuditEntry, Project
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


def send(client, method: str, url: str, body: dict):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def test_the_api_creates_reads_and_edits_the_setting_off_unless_chosen(alice, project, repo):
    creator = factories.project_creator("erin")
    created = send(signed_in(creator), "post", "/api/projects",
                   {"slug": "shop", "name": "Shop", "target_folder": str(repo)})
    assert created.status_code == 201 and created.json()["require_change_review"] is False
    chosen = send(signed_in(creator), "post", "/api/projects",
                  {"slug": "shop-2", "name": "Shop 2", "target_folder": str(repo), "require_change_review": True})
    assert chosen.json()["require_change_review"] is True and Project.objects.get(slug="shop-2").require_change_review

    edited = send(signed_in(alice), "patch", f"/api/projects/{project.slug}", {"require_change_review": True})

    assert edited.status_code == 200 and edited.json()["require_change_review"] is True
    assert signed_in(alice).get(f"/api/projects/{project.slug}").json()["require_change_review"] is True
    entry = AuditEntry.objects.filter(action="project.edited", object_id=project.slug).latest("created_at")
    assert (entry.before, entry.after) == ({"require_change_review": False}, {"require_change_review": True})
    wrong = send(signed_in(alice), "patch", f"/api/projects/{project.slug}", {"require_change_review": "maybe"})
    assert wrong.status_code == 400


def test_the_settings_page_offers_the_setting_and_the_project_page_says_it(project, alice, repo):
    client = signed_in(alice)
    form = client.get(reverse("project_edit", args=[project.slug])).content.decode()
    assert 'name="require_change_review"' in form

    saved = client.post(reverse("project_edit", args=[project.slug]), {
        "name": project.name, "target_folder": str(repo), "agent": "", "require_change_review": "on"})

    assert saved.status_code == 302, saved.content.decode()[:2000]
    project.refresh_from_db()
    assert project.require_change_review is True
    shown = client.get(reverse("project_detail", args=[project.slug])).content.decode()
    assert "changes need a review before they land" in shown


def test_the_admin_lists_the_setting():
    assert "require_change_review" in site._registry[Project].list_display
