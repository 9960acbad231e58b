"""Personal API tokens: they expire, may be read-only, cannot mint tokens, and die with the password."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from graphs.models import ApiToken
from graphs.tokens import MAX_ACTIVE_TOKENS, token_create
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


def bearer(raw: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def post(client: Client, url: str, body: dict, **headers):
    return client.post(url, data=json.dumps(body), content_type="application/json", **headers)


def task_body(project) -> dict:
    return {"project": project.slug, "title": "Export", "goal_text": "Add CSV export.",
            "deliverables": ["A button"], "acceptance_criteria": ["It downloads"]}


def test_a_token_expires_after_90_days_unless_its_creator_chose_fewer(alice):
    client = signed_in(alice)
    default = post(client, "/api/tokens", {"name": "laptop"}).json()
    short = post(client, "/api/tokens", {"name": "ci", "expires_in_days": 7}).json()
    now = timezone.now()
    assert abs(ApiToken.objects.get(pk=default["id"]).expires_at - (now + timedelta(days=90))) < timedelta(minutes=1)
    assert abs(ApiToken.objects.get(pk=short["id"]).expires_at - (now + timedelta(days=7))) < timedelta(minutes=1)
    assert post(client, "/api/tokens", {"name": "forever", "expires_in_days": 10_000}).status_code == 400


def test_an_expired_token_is_refused(alice):
    token, raw = token_create(user=alice, name="old")
    assert Client().get("/api/tasks", **bearer(raw)).status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = Client().get("/api/tasks", **bearer(raw))
    assert response.status_code == 401 and response.json()["code"] == "unauthenticated"


@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_a_bad_expired_or_revoked_token_is_401_on_every_method_not_a_csrf_failure(alice, project, method):
    expired, expired_raw = token_create(user=alice, name="expired")
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    revoked, revoked_raw = token_create(user=alice, name="revoked")
    ApiToken.objects.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    client = Client(enforce_csrf_checks=True)
    for raw in ("wgc_made-up", expired_raw, revoked_raw):
        if method == "post":
            response = post(client, "/api/tasks", task_body(project), **bearer(raw))
        elif method == "get":
            response = client.get("/api/tasks", **bearer(raw))
        else:
            response = client.delete(f"/api/tokens/{revoked.pk}", **bearer(raw))
        assert response.status_code == 401, (raw, response.content)
        assert response.json()["code"] == "unauthenticated"


def test_a_read_only_token_reads_but_cannot_change_anything(alice, project):
    client = signed_in(alice)
    raw = post(client, "/api/tokens", {"name": "dashboard", "read_only": True}).json()["token"]
    assert Client().get("/api/tasks", **bearer(raw)).status_code == 200
    response = post(Client(), "/api/tasks", task_body(project), **bearer(raw))
    assert response.status_code == 403 and response.json()["code"] == "read_only_token"
    assert client.get("/api/tokens").json()[0]["read_only"] is True


def test_a_token_cannot_mint_tokens(alice):
    _, raw = token_create(user=alice, name="cli")
    response = post(Client(), "/api/tokens", {"name": "another"}, **bearer(raw))
    assert response.status_code == 403 and response.json()["code"] == "forbidden"
    assert ApiToken.objects.filter(user=alice).count() == 1


def test_changing_the_password_revokes_every_token_of_the_user(alice, bob):
    _, raw = token_create(user=alice, name="cli")
    _, bobs = token_create(user=bob, name="cli")
    alice.set_password("a new and different passphrase")
    alice.save()
    assert Client().get("/api/tasks", **bearer(raw)).status_code == 401
    assert Client().get("/api/tasks", **bearer(bobs)).status_code == 200
    assert ApiToken.objects.get(user=alice).revoked_at is not None


def test_deactivating_a_user_revokes_their_tokens_for_good(alice):
    _, raw = token_create(user=alice, name="cli")
    alice.is_active = False
    alice.save()
    alice.is_active = True
    alice.save()
    assert Client().get("/api/tasks", **bearer(raw)).status_code == 401


def test_signing_in_does_not_revoke_tokens(alice):
    _, raw = token_create(user=alice, name="cli")
    signing_in = Client().post("/login/", {"username": "alice", "password": "correct horse battery staple"})
    assert signing_in.status_code == 302
    assert Client().get("/api/tasks", **bearer(raw)).status_code == 200


def test_a_user_holds_a_limited_number_of_active_tokens(alice):
    client = signed_in(alice)
    expired, _ = token_create(user=alice, name="expired")
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    for index in range(MAX_ACTIVE_TOKENS):
        assert post(client, "/api/tokens", {"name": f"t{index}"}).status_code == 201
    refused = post(client, "/api/tokens", {"name": "one too many"})
    assert refused.status_code == 409 and refused.json()["code"] == "token_limit"
    first = ApiToken.objects.filter(user=alice, revoked_at__isnull=True).exclude(pk=expired.pk).first()
    assert client.delete(f"/api/tokens/{first.pk}").status_code == 204
    assert post(client, "/api/tokens", {"name": "replacement"}).status_code == 201
