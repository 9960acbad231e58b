"""A change waiting for a reviewer is announced: the inbox of the project's reviewers and leads lists it
(kind change_review, with the attempt and its node) until a reviewer decides, webhooks that hear
review.waiting receive it signed, and members who chose it are mailed; the run graph's notices say it."""

from __future__ import annotations

import json

import pytest
from standardwebhooks.webhooks import Webhook as Verifier

from graphs.reads.inbox import inbox_count, inbox_items
from tests import factories
from tests.change_reviews import build_then_check, review, review_required, waiting_build
from tests.clients import signed_in
from tests.smtp_server import smtp_server
from tests.webhook_receiver import webhook_receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiving(settings):
    settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = True
    settings.WORKGRAPH_WEBHOOK_TIMEOUT_SECONDS = 2
    with webhook_receiver() as receiver:
        yield receiver


@pytest.fixture
def mailbox(settings):
    with smtp_server() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.WORKGRAPH_EMAIL_BATCH_SECONDS = 0.5
        yield server


def test_the_inbox_of_reviewers_and_leads_lists_the_waiting_change_until_it_is_decided(
    repo_task, project, alice, bob, scripted_runner, inline_executor
):
    viewer = factories.member(project, "victor", role="viewer")
    review_required(project)
    build = waiting_build(build_then_check(repo_task, scripted_runner, inline_executor))

    for user in (alice, bob):
        [item] = inbox_items(user)
        assert (item.kind, item.node_exec_id, item.node_id) == ("change_review", build.pk, "build")
        assert item.nodes_waiting == 2
        assert item.label == "node build's change" and inbox_count(user) == 1
    assert inbox_items(viewer) == [] and inbox_count(viewer) == 0
    listed = signed_in(bob).get("/api/inbox").json()
    assert [(entry["kind"], entry["node_exec_id"], entry["node_id"]) for entry in listed["items"]] == [
        ("change_review", str(build.pk), "build")]
    assert listed["items"][0]["url"] == f"/executions/{build.pk}/#changes"
    page = signed_in(bob).get("/inbox/").content.decode()
    assert "Review node build's change" in page and f"/executions/{build.pk}/#changes" in page
    graph = signed_in(bob).get(f"/runs/{build.run_id}/").content.decode()
    assert "Waiting for a review: node build&#x27;s change (attempt 1)" in graph

    review(build, bob, "approve")
    inline_executor.drain()

    assert inbox_items(bob) == [] and inbox_count(alice) == 0


def test_webhooks_and_emails_that_chose_it_announce_the_waiting_change(
    repo_task, project, alice, bob, scripted_runner, inline_executor, receiving, mailbox,
    django_capture_on_commit_callbacks,
):
    review_required(project)
    hook = signed_in(alice).post(f"/api/projects/{project.slug}/webhooks", content_type="application/json",
                                 data=json.dumps({"url": receiving.url, "events": ["review.waiting"]})).json()
    chosen = signed_in(bob).put(f"/api/projects/{project.slug}/notifications/email", content_type="application/json",
                                data=json.dumps({"events": ["review.waiting"]}))
    assert chosen.json() == {"events": ["review.waiting"]}

    with django_capture_on_commit_callbacks(execute=True):
        run = build_then_check(repo_task, scripted_runner, inline_executor)
    inline_executor.drain()

    build = waiting_build(run)
    [received] = receiving.wait_for(1)
    payload = Verifier(hook["secret"]).verify(received.body, received.headers)
    assert payload["type"] == "review.waiting"
    assert payload["data"]["facts"] == {"node_id": "build", "node_exec_id": str(build.pk)}
    assert payload["data"]["run"]["status"] == "running"
    [message] = mailbox.wait_for(1)
    assert message["X-Envelope-To"] == bob.email
    subject = "".join(str(message["Subject"]).splitlines())  # unfolded: a long header is folded at a space
    assert subject == f"[{project.name}] {repo_task.title}: has a change waiting for a reviewer (node build)"
