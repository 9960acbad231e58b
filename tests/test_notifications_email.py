"""Email notifications against a real SMTP server (aiosmtpd): a member chooses the events of a project
they hear of, each event is one message, a burst within the batch's minute comes as one message listing
them, and no one who did not choose the event (or left the project) is mailed."""

from __future__ import annotations

import json

import pytest

from graphs.models import EmailNotice, ProjectMembership
from graphs.notifications import EXTERNAL_WAITING, RUN_FAILED, notify
from tests.clients import signed_in
from tests.run_builders import node, planned_run
from tests.smtp_server import smtp_server

pytestmark = pytest.mark.django_db


@pytest.fixture
def mailbox(settings):
    with smtp_server() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.WORKGRAPH_EMAIL_BATCH_SECONDS = 0.5
        yield server


def choose(user, project, events: list[str]):
    return signed_in(user).put(f"/api/projects/{project.slug}/notifications/email",
                               data=json.dumps({"events": events}), content_type="application/json")


def announce(task, event: str, capture, *, times: int = 1) -> None:
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    with capture(execute=True):
        for number in range(times):
            node_facts = {"node_id": f"n{number}", "node_exec_id": f"exec-{run.pk}-{number}"}
            notify(event, run=run, **(node_facts if event == EXTERNAL_WAITING else {}))


def test_a_member_chooses_events_and_gets_one_message_per_event(task, project, alice, bob, mailbox, inline_executor,
                                                                django_capture_on_commit_callbacks):
    assert choose(bob, project, ["run.failed"]).json() == {"events": ["run.failed"]}
    assert signed_in(bob).get(f"/api/projects/{project.slug}/notifications/email").json() == {"events": ["run.failed"]}

    announce(task, RUN_FAILED, django_capture_on_commit_callbacks)
    inline_executor.drain()

    [message] = mailbox.wait_for(1)
    assert message["X-Envelope-To"] == bob.email
    assert message["Subject"] == f"[{project.name}] {task.title}: run failed"
    assert "run failed" in message.get_payload(decode=True).decode()


def test_events_within_the_batch_minute_come_as_one_message_listing_them(
        task, project, bob, mailbox, inline_executor, django_capture_on_commit_callbacks):
    choose(bob, project, ["external.waiting"])

    announce(task, EXTERNAL_WAITING, django_capture_on_commit_callbacks)
    inline_executor.drain()
    announce(task, EXTERNAL_WAITING, django_capture_on_commit_callbacks, times=4)
    inline_executor.drain()

    first, batch = mailbox.wait_for(2)
    assert "waits for an external report (node n0)" in first["Subject"]
    assert batch["Subject"] == "4 notifications from the Work Graph Console"
    text = batch.get_payload(decode=True).decode()
    assert all(f"(node n{number})" in text for number in range(4))
    assert len(mailbox.messages) == 2
    sent = sorted(set(EmailNotice.objects.values_list("sent_at", flat=True)))
    assert len(sent) == 2 and (sent[1] - sent[0]).total_seconds() >= 0.5  # the batch waited out the minute


def test_no_one_is_mailed_an_event_they_did_not_choose_or_of_a_project_they_left(
        task, project, alice, bob, mailbox, inline_executor, django_capture_on_commit_callbacks):
    choose(alice, project, ["run.succeeded"])
    choose(bob, project, ["run.failed"])
    ProjectMembership.objects.filter(user=bob).delete()

    announce(task, RUN_FAILED, django_capture_on_commit_callbacks)
    inline_executor.drain()

    assert mailbox.messages == []
    assert not EmailNotice.objects.exists()


def test_an_unknown_event_is_refused(project, bob, db):
    answer = choose(bob, project, ["run.exploded"])
    assert answer.status_code == 400 and "run.exploded" in answer.json()["message"]
