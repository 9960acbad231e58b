"""``/inbox/count/``: the navigation's inbox count alone, as every page renders it — the signed-in person's
own count, never kept by a cache, and nothing for a visitor."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests import factories
from tests.clients import signed_in
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db

BADGE = re.compile(r'<span class="badge" id="inbox-count"[^>]*>[^<]*</span>')


def plan_waiting(task) -> None:
    planned_run(task, {"nodes": [node("a")], "edges": []}, status="awaiting_approval")


def test_it_is_the_badge_every_page_shows_and_nothing_else(task, alice):
    plan_waiting(task)
    client = signed_in(alice)

    alone = client.get("/inbox/count/")
    page = client.get("/tasks/").content.decode()

    assert alone.status_code == 200
    assert set(alone["Cache-Control"].split(", ")) == {"private", "no-store"}
    badge = BADGE.search(page).group(0)
    assert alone.content.decode().strip().endswith(badge)
    assert BADGE.sub("", alone.content.decode()).strip() == "", "the response holds nothing but the badge"
    assert badge == (
        '<span class="badge" id="inbox-count" data-live-region data-count="1" aria-label="1 waiting on you">1</span>'
    )


def test_each_person_gets_their_own_count(task, alice, bob, charlie):
    plan_waiting(task)
    factories.member(factories.ProjectFactory(), "dora", role="viewer")

    assert 'data-count="1"' in signed_in(bob).get("/inbox/count/").content.decode()
    outsider = signed_in(charlie).get("/inbox/count/").content.decode()
    assert 'data-count="0" aria-label="0 waiting on you" hidden>0</span>' in outsider


def test_a_visitor_is_sent_to_sign_in_and_shown_no_count(task):
    plan_waiting(task)

    response = Client().get("/inbox/count/")

    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=/inbox/count/")
    assert b"inbox-count" not in response.content
