"""Guessing passwords is throttled, by username and by address; minting tokens is throttled per user."""

from __future__ import annotations

import json

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
FAILURE_LIMIT = 5


def sign_in(username: str, password: str, *, address: str = "10.0.0.1"):
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password})


def test_alice_signs_in_after_a_few_typos(alice):
    for _ in range(FAILURE_LIMIT - 1):
        assert sign_in("alice", "wrong").status_code == 200
    assert sign_in("alice", PASSWORD).status_code == 302


def test_too_many_failures_for_a_username_lock_its_sign_in_from_every_address(alice):
    for attempt in range(FAILURE_LIMIT):
        sign_in("alice", "wrong", address=f"10.0.1.{attempt}")
    locked = sign_in("alice", PASSWORD, address="10.0.2.1")
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "15 minutes" in locked.content.decode()


def test_too_many_failures_from_an_address_lock_it_for_every_username(alice, bob):
    for attempt in range(FAILURE_LIMIT):
        sign_in(f"guess{attempt}", "wrong", address="10.0.3.1")
    assert sign_in("bob", PASSWORD, address="10.0.3.1").status_code == 429
    assert sign_in("bob", PASSWORD, address="10.0.3.2").status_code == 302


def test_minting_tokens_is_throttled_per_user(alice, bob):
    def mint(user):
        client = Client()
        client.force_login(user)
        response = client.post("/api/tokens", data=json.dumps({"name": "script"}), content_type="application/json")
        if response.status_code == 201:
            client.delete(f"/api/tokens/{response.json()['id']}")
        return response

    answers = [mint(alice).status_code for _ in range(31)]
    assert answers[:30] == [201] * 30
    throttled = mint(alice)
    assert throttled.status_code == 429 and throttled.json()["code"] == "throttled"
    assert mint(bob).status_code == 201

