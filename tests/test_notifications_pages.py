"""The notifications page: every member chooses their emails; a lead adds a webhook (its secret shown
once, never again), removes one, and reads a webhook's delivery log and redelivers from it."""

from __future__ import annotations

import pytest

from graphs.models import EmailSubscription, ProjectMembership, Webhook, WebhookDelivery
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


def test_the_project_page_links_the_notifications(project, alice):
    page = signed_in(alice).get(f"/projects/{project.slug}/").content.decode()
    assert f'href="/projects/{project.slug}/notifications/"' in page


def test_a_member_chooses_their_emails_and_sees_no_webhooks(project, bob):
    client = signed_in(bob)
    page = client.get(f"/projects/{project.slug}/notifications/").content.decode()
    assert 'id="email-notifications"' in page and 'id="webhooks"' not in page

    saved = client.post(f"/projects/{project.slug}/notifications/",
                        {"action": "email", "events": ["run.failed", "approval.waiting"]})

    assert saved.status_code == 302
    assert EmailSubscription.objects.get(user=bob).events == ["run.failed", "approval.waiting"]
    assert client.post(f"/projects/{project.slug}/notifications/",
                       {"action": "webhook_add", "url": "https://example.com/", "events": ["run.failed"],
                        "format": "json"}).status_code == 403


def test_a_lead_adds_a_webhook_and_sees_its_secret_once(project, alice, settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    client = signed_in(alice)
    added = client.post(f"/projects/{project.slug}/notifications/",
                        {"action": "webhook_add", "url": "http://127.0.0.1:9/hook", "events": ["run.failed"],
                         "format": "slack"})

    hook = Webhook.objects.get()
    assert added.status_code == 302 and hook.secret not in added.content.decode()
    shown = client.get(added.url).content.decode()
    assert 'id="webhook-secret"' in shown and hook.secret in shown
    again = client.get(added.url).content.decode()
    assert "http://127.0.0.1:9/hook" in again and hook.secret not in again
    assert Webhook.objects.count() == 1

    client.post(f"/projects/{project.slug}/notifications/", {"action": "webhook_delete", "webhook_id": hook.pk})
    assert not Webhook.objects.exists()


def test_a_secret_is_shown_only_on_its_own_projects_page(project, alice, settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    other = factories.ProjectFactory()
    ProjectMembership.objects.create(user=alice, project=other, role="lead")
    client = signed_in(alice)
    client.post(f"/projects/{project.slug}/notifications/",
                {"action": "webhook_add", "url": "http://127.0.0.1:9/hook", "events": ["run.failed"], "format": "json"})

    elsewhere = client.get(f"/projects/{other.slug}/notifications/").content.decode()

    assert Webhook.objects.get().secret not in elsewhere and 'id="webhook-secret"' not in elsewhere


def test_a_refused_url_is_said_on_the_form(project, alice, settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = False
    refused = signed_in(alice).post(f"/projects/{project.slug}/notifications/",
                                    {"action": "webhook_add", "url": "http://10.0.0.1/hook", "events": ["run.failed"],
                                     "format": "json"})
    assert refused.status_code == 400
    assert "10.0.0.1, a private address" in refused.content.decode()
    assert not Webhook.objects.exists()


def test_the_delivery_log_lists_deliveries_and_redelivers(project, alice, bob, inline_executor):
    hook = Webhook.objects.create(project=project, url="https://example.com/hook", events=["run.failed"],
                                  secret="whsec_AAAA")
    delivery = WebhookDelivery.objects.create(webhook=hook, event="run.failed", event_key="k", body="{}",
                                              status="failed", attempts=4, response_code=503, duration_ms=12)
    client = signed_in(alice)
    page = client.get(f"/projects/{project.slug}/webhooks/{hook.pk}/").content.decode()
    assert delivery.message_id in page and "503" in page and "12 ms" in page
    assert signed_in(bob).get(f"/projects/{project.slug}/webhooks/{hook.pk}/").status_code == 403

    client.post(f"/projects/{project.slug}/webhooks/{hook.pk}/", {"delivery_id": str(delivery.pk)})

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 0)
    assert inline_executor.pending() == 1
