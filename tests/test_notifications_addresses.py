"""Webhook URLs to loopback, link-local and private addresses are refused — when registered, and again at
delivery after the name is resolved (a name that resolves elsewhere the second time gets nothing) —
unless WORKGRAPH_WEBHOOK_ALLOW_PRIVATE allows them."""

from __future__ import annotations

import json
import socket

import pytest

from graphs.models import Webhook, WebhookDelivery
from graphs.notifications import RUN_FAILED, notify
from graphs.notifications import addresses as addresses_module
from graphs.notifications.addresses import address_refusal
from tests.clients import signed_in
from tests.run_builders import node, planned_run
from tests.webhook_receiver import webhook_receiver

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "a loopback address"),
    ("::1", "a loopback address"),
    ("::ffff:127.0.0.1", "a loopback address"),
    ("169.254.169.254", "a link-local address"),
    ("fe80::1", "a link-local address"),
    ("10.1.2.3", "a private address"),
    ("192.168.0.1", "a private address"),
    ("fd00::1", "a private address"),
    ("0.0.0.0", "a private address"),
    ("100.64.0.1", "not a public address"),
])
def test_non_public_addresses_are_refused(settings, address, reason):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = False
    assert address_refusal(address) == reason


def test_a_public_address_is_allowed_and_the_setting_allows_the_rest(settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = False
    assert address_refusal("93.184.216.34") is None
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    assert address_refusal("127.0.0.1") is None


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/hook", "http://localhost/hook", "http://[::1]/hook",
                                 "http://169.254.169.254/latest/meta-data", "http://10.0.0.8/hook",
                                 "http://user:pw@example.com/hook"])
def test_registration_refuses_a_url_to_a_private_address(project, alice, settings, url):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = False
    answer = signed_in(alice).post(f"/api/projects/{project.slug}/webhooks",
                                   data=json.dumps({"url": url, "events": ["run.failed"]}),
                                   content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["fields"][0]["field"] == "url"
    assert not Webhook.objects.exists()


def test_a_loopback_receiver_gets_nothing_once_private_addresses_are_refused(
        task, project, alice, settings, inline_executor, django_capture_on_commit_callbacks):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    with webhook_receiver() as receiver:
        answer = signed_in(alice).post(f"/api/projects/{project.slug}/webhooks",
                                       data=json.dumps({"url": receiver.url, "events": ["run.failed"]}),
                                       content_type="application/json")
        assert answer.status_code == 201
        settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = False
        run = planned_run(task, {"nodes": [node("a")], "edges": []})
        with django_capture_on_commit_callbacks(execute=True):
            notify(RUN_FAILED, run=run)
        inline_executor.drain()

        delivery = WebhookDelivery.objects.get()
        assert delivery.status == "refused" and "a loopback address" in delivery.error
        assert receiver.requests == []


def test_a_name_that_resolves_to_loopback_at_delivery_is_refused(task, project, alice, settings, monkeypatch,
                                                               inline_executor, django_capture_on_commit_callbacks):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = False
    answers = iter(["93.184.216.34", "127.0.0.1"])  # public when registered, loopback when delivered

    def rebinding(host, port, *args, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(addresses_module.socket, "getaddrinfo", rebinding)
    answer = signed_in(alice).post(f"/api/projects/{project.slug}/webhooks",
                                   data=json.dumps({"url": "http://hooks.example.test/x", "events": ["run.failed"]}),
                                   content_type="application/json")
    assert answer.status_code == 201
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    with django_capture_on_commit_callbacks(execute=True):
        notify(RUN_FAILED, run=run)
    inline_executor.drain()

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("refused", 1)
    assert "resolves to 127.0.0.1, a loopback address" in delivery.error
