"""Every page carries a Content-Security-Policy that runs the console's own scripts only, and the pages
need nothing more: no inline script, no event-handler attribute, no third-party asset."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client

from graphs.engine import pipeline_start
from graphs.models import Skill, WorkGraphRun
from graphs.skills.revisions import skill_save
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


class _Offences(HTMLParser):
    """Collects what a strict policy would block: inline scripts, ``on*=`` handlers, ``style=``, remote URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_inline_script = False

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        for name, value in attrs:
            if name.startswith("on") or name == "style":
                self.found.append(f"<{tag} {name}=...>")
            if name in ("src", "href") and value and value.startswith(("http:", "https:", "//")):
                self.found.append(f"<{tag} {name}={value}>")
        if tag == "script" and "src" not in values and values.get("type") != "application/json":
            self._in_inline_script = True

    def handle_data(self, data):
        if self._in_inline_script and data.strip():
            self.found.append(f"<script>{data.strip()[:60]}")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_inline_script = False


def offences(html: str) -> list[str]:
    parser = _Offences()
    parser.feed(html)
    return parser.found


@pytest.fixture
def pages(task, inline_executor, dana, project) -> list[str]:
    """Every kind of page, each one dana may open: she leads the project and administers skills."""
    factories.member(project, "dana", role="lead")
    pipeline_start(task=task)
    inline_executor.drain()
    run = WorkGraphRun.objects.get(task=task)
    execution = run.executions.exclude(node_id__startswith="__").first()
    skill_save(skill=Skill(skill_id="research", name="Research"), body="# Research\n", author=dana)
    return [
        "/", "/tasks/", "/tasks/new/", f"/tasks/{task.pk}/", f"/runs/{run.run_id}/", f"/runs/{run.run_id}/planning/",
        f"/executions/{execution.pk}/", "/skills/", "/skills/new/", "/skills/research/", "/skills/research/edit/",
        "/skills/research/usage/", "/api/docs",
    ]


def policy_of(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def test_every_page_runs_only_the_consoles_own_scripts(pages, dana):
    client = signed_in(dana)
    for url in ["/login/", *pages]:
        response = (Client() if url == "/login/" else client).get(url)
        assert response.status_code == 200, url
        policy = policy_of(response)
        assert policy["script-src"] == ["'self'"], url
        assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"], url
        assert "'unsafe-inline'" not in response["Content-Security-Policy"], url


def test_no_page_has_an_inline_script_a_handler_attribute_or_a_remote_asset(pages, dana):
    client = signed_in(dana)
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert offences(response.content.decode()) == [], url


def test_the_api_docs_load_their_assets_from_the_console(alice):
    page = signed_in(alice).get("/api/docs").content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in page
    assert "cdn" not in page
