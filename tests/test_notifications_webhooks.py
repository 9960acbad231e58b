"""Webhooks against a real local receiver: a lead registers one (its secret shown once), run events reach
it signed the Standard Webhooks way (verified by the standardwebhooks package), 500s and timeouts are
retried with the same id until the receiver answers, a redirect is not followed, redeliver sends the
same id again, an event announced twice is delivered once, and a refused address gets nothing."""

from __future__ import annotations

import json

import pytest
from standardwebhooks.webhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from graphs.models import WebhookDelivery
from graphs.notifications import BUDGET_EXCEEDED, RUN_FAILED, notify
from graphs.runs.status import run_status_set
from tests.clients import signed_in
from tests.run_builders import node, planned_run
from tests.webhook_receiver import webhook_receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiving(settings):
    """The receiver on loopback, which the console may reach only because this test allows private addresses."""
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    settings.WORKGRAPH_WEBHOOK_TIMEOUT_SECONDS = 0.5
    settings.WORKGRAPH_WEBHOOK_BACKOFF_SECONDS = 0.05
    settings.WORKGRAPH_WEBHOOK_RETRY_SECONDS = 5
    with webhook_receiver() as receiver:
        yield receiver


def register(client, project, url: str, events: list[str], **more):
    return client.post(f"/api/projects/{project.slug}/webhooks",
                       data=json.dumps({"url": url, "events": events, **more}), content_type="application/json")


@pytest.fixture
def hooked(project, alice, receiving):
    """Alice's webhook on the receiver for every run event; its secret."""
    answer = register(signed_in(alice), project, receiving.url, ["run.succeeded", "run.failed", "budget.exceeded"])
    assert answer.status_code == 201, answer.content
    return answer.json()


def finish(task, status: str, django_capture_on_commit_callbacks):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    with django_capture_on_commit_callbacks(execute=True):
        run_status_set(run=run, status=status, error="" if status == "succeeded" else "it broke")
    return run


def test_a_lead_registers_a_webhook_whose_secret_is_shown_once(project, alice, bob, receiving):
    created = register(signed_in(alice), project, receiving.url, ["run.failed", "approval.waiting"], format="slack")

    assert created.status_code == 201
    assert created.json()["secret"].startswith("whsec_")
    listed = signed_in(alice).get(f"/api/projects/{project.slug}/webhooks").json()
    assert [(hook["url"], hook["events"], hook["format"]) for hook in listed] == [
        (receiving.url, ["run.failed", "approval.waiting"], "slack")]
    assert "secret" not in listed[0]
    assert register(signed_in(bob), project, receiving.url, ["run.failed"]).status_code == 403
    unknown = register(signed_in(alice), project, receiving.url, ["run.exploded"])
    assert unknown.status_code == 400 and "run.exploded" in unknown.json()["message"]
    assert register(signed_in(alice), project, "ftp://example.com/", ["run.failed"]).status_code == 400
    gone = signed_in(alice).delete(f"/api/projects/{project.slug}/webhooks/{listed[0]['id']}")
    assert gone.status_code == 204
    assert signed_in(alice).get(f"/api/projects/{project.slug}/webhooks").json() == []


def test_a_run_event_reaches_the_receiver_signed(task, hooked, receiving, inline_executor,
                                                 django_capture_on_commit_callbacks):
    run = finish(task, "succeeded", django_capture_on_commit_callbacks)
    inline_executor.drain()

    [received] = receiving.wait_for(1)
    payload = Verifier(hooked["secret"]).verify(received.body, received.headers)
    assert payload["type"] == "run.succeeded" and payload["id"] == received.headers["webhook-id"]
    assert payload["data"]["run"] == {"id": str(run.pk), "status": "succeeded", "url": None}
    assert payload["data"]["task"]["title"] == task.title
    assert received.path == "/hooks/workgraph?x=1"
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.response_code, delivery.attempts) == ("succeeded", 200, 1)
    with pytest.raises(WebhookVerificationError):  # a body altered in transit
        Verifier(hooked["secret"]).verify(received.body + b" ", received.headers)


def test_500s_and_a_timeout_are_retried_with_the_same_id(task, project, alice, hooked, receiving, inline_executor,
                                                         django_capture_on_commit_callbacks):
    receiving.script[:] = [500, ("sleep", 1.5), 200]
    finish(task, "failed", django_capture_on_commit_callbacks)
    inline_executor.drain()

    received = receiving.wait_for(3)
    assert len({request.headers["webhook-id"] for request in received}) == 1
    assert len({request.body for request in received}) == 1
    for request in received:
        Verifier(hooked["secret"]).verify(request.body, request.headers)
    log = signed_in(alice).get(f"/api/projects/{project.slug}/webhooks/{hooked['id']}/deliveries").json()
    assert [(row["event"], row["status"], row["attempts"], row["response_code"]) for row in log] == [
        ("run.failed", "succeeded", 3, 200)]
    assert log[0]["id"] == received[0].headers["webhook-id"] and log[0]["duration_ms"] is not None


def test_a_delivery_that_keeps_failing_ends_after_its_window_with_a_short_excerpt(
        task, hooked, receiving, inline_executor, settings, django_capture_on_commit_callbacks):
    settings.WORKGRAPH_WEBHOOK_RETRY_SECONDS = 0.2  # 0.05 + 0.1 fit, the next 0.2 does not: three tries
    receiving.script[:] = [500] * 10
    finish(task, "failed", django_capture_on_commit_callbacks)
    inline_executor.drain()

    assert len(receiving.wait_for(3)) == 3
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("failed", 3, 500)
    assert delivery.next_try_at is None
    assert len(delivery.response_excerpt) == 500


def test_a_redirect_is_not_followed(task, hooked, receiving, inline_executor, settings,
                                    django_capture_on_commit_callbacks):
    settings.WORKGRAPH_WEBHOOK_RETRY_SECONDS = 0
    receiving.script[:] = [302]
    finish(task, "failed", django_capture_on_commit_callbacks)
    inline_executor.drain()

    assert len(receiving.requests) == 1
    assert WebhookDelivery.objects.values_list("status", "response_code").get() == ("failed", 302)


def test_redeliver_sends_the_same_delivery_again(task, project, alice, hooked, receiving, inline_executor,
                                                 django_capture_on_commit_callbacks):
    finish(task, "succeeded", django_capture_on_commit_callbacks)
    inline_executor.drain()
    [first] = receiving.wait_for(1)

    answer = signed_in(alice).post(
        f"/api/projects/{project.slug}/webhooks/{hooked['id']}/deliveries/{first.headers['webhook-id']}/redeliver")
    assert answer.status_code == 202 and answer.json()["status"] == "pending"
    inline_executor.drain()

    second = receiving.wait_for(2)[1]
    assert (second.headers["webhook-id"], second.body) == (first.headers["webhook-id"], first.body)
    assert WebhookDelivery.objects.values_list("status", "attempts").get() == ("succeeded", 1)


def test_an_event_announced_twice_is_delivered_once(task, hooked, receiving, inline_executor,
                                                    django_capture_on_commit_callbacks):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    with django_capture_on_commit_callbacks(execute=True):
        notify(BUDGET_EXCEEDED, run=run, budget_usd="1.0000", spent_usd="1.2000")
        notify(BUDGET_EXCEEDED, run=run, budget_usd="1.0000", spent_usd="1.3000")
    inline_executor.drain()

    [received] = receiving.wait_for(1)
    assert json.loads(received.body)["data"]["facts"] == {"budget_usd": "1.0000", "spent_usd": "1.2000"}
    assert WebhookDelivery.objects.count() == 1


def test_a_slack_webhook_gets_a_slack_message(task, project, alice, receiving, inline_executor,
                                              django_capture_on_commit_callbacks):
    register(signed_in(alice), project, receiving.url, ["run.failed"], format="slack")
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    with django_capture_on_commit_callbacks(execute=True):
        notify(RUN_FAILED, run=run, error="<script>x</script>")
    inline_executor.drain()

    message = json.loads(receiving.wait_for(1)[0].body)
    assert message["text"].endswith("run failed")
    assert message["blocks"][0]["type"] == "section"
    assert "&lt;script&gt;" in message["blocks"][0]["text"]["text"]
