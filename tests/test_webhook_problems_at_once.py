"""Registering a webhook names every problem of the submission at once — its URL, its events, its format and
the project's room for one more — and the notifications page shows the same set, each on its field in the
API's words, and saves nothing."""

from __future__ import annotations

import html
import json
import re

import pytest

from graphs.models import Webhook
from graphs.notifications.webhooks import WEBHOOKS_PER_PROJECT
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

# A private address (refused: no DNS needed for an IP), no event ticked, and a format the console lacks.
EVERYTHING_WRONG = {"url": "http://10.0.0.1/hook", "events": [], "format": "xml"}


@pytest.fixture(autouse=True)
def private_addresses_refused(settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = False


def api_problems(response) -> dict[str, str]:
    return {problem["field"]: problem["message"] for problem in response.json()["fields"]}


def page_problems(response) -> dict[str, str]:
    """Each field the webhook form marks as wrong, with its message as the page shows it; what concerns no
    field (the project's webhooks) under ``webhooks``."""
    form = re.search(r'<form [^>]*id="webhook-add".*?</form>', response.content.decode(), re.S).group(0)
    problems = {name: html.unescape(message)
                for name, message in re.findall(r'<p class="error" id="error-([a-z_]+)">(.*?)</p>', form, re.S)}
    apart = [html.unescape(message) for message in re.findall(r'<p class="error">(.*?)</p>', form, re.S)]
    return problems | ({"webhooks": " ".join(apart)} if apart else {})


def through_api(client, project, body: dict):
    return client.post(f"/api/projects/{project.slug}/webhooks", data=json.dumps(body),
                       content_type="application/json")


def through_page(client, project, body: dict):
    return client.post(f"/projects/{project.slug}/notifications/", {"action": "webhook_add", **body})


def test_the_api_names_a_refused_url_no_event_and_an_unknown_format_at_once(project, alice):
    answer = through_api(signed_in(alice), project, EVERYTHING_WRONG)

    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_webhook"
    assert api_problems(answer) == {
        "url": "this URL is refused: 10.0.0.1 resolves to 10.0.0.1, a private address",
        "events": "choose at least one event",
        "format": "format must be one of json, slack",
    }
    assert not Webhook.objects.exists()


def test_the_page_shows_the_same_problems_on_their_fields(project, alice):
    client = signed_in(alice)

    page = through_page(client, project, EVERYTHING_WRONG)
    api = through_api(client, project, EVERYTHING_WRONG)

    assert page.status_code == 400
    assert set(page_problems(page)) == {"url", "events", "format"}
    assert page_problems(page) == api_problems(api)
    assert not Webhook.objects.exists()


def test_an_empty_url_and_an_unknown_event_are_named_together_on_page_and_api(project, alice):
    client = signed_in(alice)
    body = {"url": "  ", "events": ["run.failed", "run.exploded"], "format": "json"}

    page = through_page(client, project, body)
    api = through_api(client, project, body)

    assert api_problems(api)["url"] == "give the webhook a URL"
    assert api_problems(api)["events"].startswith("unknown events: run.exploded; known: run.succeeded")
    assert page_problems(page) == api_problems(api)
    assert not Webhook.objects.exists()


def test_a_project_at_its_limit_is_named_beside_the_submissions_own_problems(project, alice):
    Webhook.objects.bulk_create(Webhook(project=project, url=f"https://example.com/{n}", events=["run.failed"],
                                        secret="whsec_AAAA") for n in range(WEBHOOKS_PER_PROJECT))
    client = signed_in(alice)
    body = {"url": "ftp://example.com/hook", "events": ["run.failed"], "format": "json"}

    page = through_page(client, project, body)
    api = through_api(client, project, body)

    assert api_problems(api) == {
        "url": "this URL is refused: the URL must start with http:// or https://",
        "webhooks": f"a project has {WEBHOOKS_PER_PROJECT} webhooks at most: remove one to add another",
    }
    assert page_problems(page) == api_problems(api)
    assert Webhook.objects.count() == WEBHOOKS_PER_PROJECT


def test_a_nul_in_the_url_is_named_on_the_page_beside_the_other_problems(project, alice):
    page = through_page(signed_in(alice), project, EVERYTHING_WRONG | {"url": "https://example.com/\x00"})

    assert page_problems(page) == {"url": "the URL must not contain a NUL character",
                                   "events": "choose at least one event",
                                   "format": "format must be one of json, slack"}
    assert not Webhook.objects.exists()


def test_the_page_keeps_what_was_typed_and_ticked(project, alice):
    page = through_page(signed_in(alice), project, {"url": "http://10.0.0.1/hook", "events": ["node.failed"],
                                                    "format": "slack"}).content.decode()

    assert 'value="http://10.0.0.1/hook"' in page
    assert re.search(r'<input [^>]*value="node.failed"[^>]*checked', page)
    assert re.search(r'<option value="slack" selected>', page)
