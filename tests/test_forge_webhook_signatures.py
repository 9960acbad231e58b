"""The forge's webhook is verified as each forge signs it: GitHub's X-Hub-Signature-256 HMAC, GitLab's
X-Gitlab-Token, Gitea's X-Gitea-Signature. A good signature is accepted (202); a wrong or missing one, a
project with no webhook secret set, or no such project is a 401 with a JSON error, recorded on the audit log
without the secret; an event for a branch the console did not deliver is accepted and changes nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.models import AuditEntry
from tests.deliveries import HOOK_SECRET, SECRET_ENV, TOKEN_ENV, delivering
from tests.forge_events import event_post, gitlab_merge_request, pull_request_event, signed_headers

pytestmark = pytest.mark.django_db
EVENTS = {"github": "pull_request", "gitlab": "Merge Request Hook", "gitea": "pull_request"}


@pytest.fixture(params=sorted(EVENTS))
def forge(request, project, forge_token):
    delivering(project, deliver="pull_request", remote_url="/srv/remote.git", forge=request.param,
               forge_api_url="http://127.0.0.1:9/api", forge_repo="acme/app", forge_token_env=TOKEN_ENV,
               forge_webhook_secret_env=SECRET_ENV)
    return request.param


def payload(forge):
    if forge == "gitlab":
        return gitlab_merge_request(iid=7, branch="workgraph/run-00000000", sha="a" * 40, state="closed")
    return pull_request_event(number=7, branch="workgraph/run-00000000", sha="a" * 40, state="closed")


def refusals():
    return list(AuditEntry.objects.filter(action=AuditEntry.Action.FORGE_EVENT_REFUSED))


def test_a_signed_event_is_accepted_and_one_for_a_branch_never_delivered_changes_nothing(forge, project):
    answer = event_post(Client(), project.slug, forge, EVENTS[forge], payload(forge), secret=HOOK_SECRET)

    assert answer.status_code == 202, answer.content
    assert answer.json()["outcome"].startswith("ignored: the console delivered no such")
    assert refusals() == []


@pytest.mark.parametrize("secret, expected", [("whsec_someone-else-entirely", "does not match"),
                                              (None, "carries no")])
def test_a_wrong_or_missing_signature_is_refused_and_recorded(forge, project, secret, expected):
    answer = event_post(Client(), project.slug, forge, EVENTS[forge], payload(forge), secret=secret)

    assert answer.status_code == 401
    assert answer.json()["code"] == "unauthenticated" and expected in answer.json()["message"]
    (entry,) = refusals()
    assert entry.project == project and entry.after["forge"] == forge and entry.after["event"] == EVENTS[forge]
    assert expected in entry.summary and entry.actor is None
    assert HOOK_SECRET not in f"{entry.summary}{entry.after}{answer.content!r}"


def test_a_body_changed_after_signing_is_refused_where_the_forge_signs_the_body(forge, project):
    headers = signed_headers(forge, EVENTS[forge], b'{"number": 1}', HOOK_SECRET)

    answer = Client().post(f"/api/forge/{project.slug}/events", data=b'{"number": 2}',
                           content_type="application/json", headers=headers)

    # GitLab sends the secret itself, not a signature of the body: its token alone is checked.
    assert answer.status_code == (202 if forge == "gitlab" else 401)
    assert len(refusals()) == (0 if forge == "gitlab" else 1)


def test_a_project_whose_webhook_secret_is_not_set_refuses_every_event(forge, project, monkeypatch):
    monkeypatch.delenv(SECRET_ENV)

    answer = event_post(Client(), project.slug, forge, EVENTS[forge], payload(forge), secret=HOOK_SECRET)

    assert answer.status_code == 401 and SECRET_ENV in answer.json()["message"]
    assert len(refusals()) == 1


def test_an_unknown_project_is_refused_and_recorded(db):
    answer = event_post(Client(), "no-such-project", "github", "check_run", {}, secret=HOOK_SECRET)

    assert answer.status_code == 401 and answer.json()["message"].endswith("no project has this slug.")
    (entry,) = refusals()
    assert entry.object_id == "no-such-project" and entry.project is None
