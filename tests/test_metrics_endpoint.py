"""``/metrics`` is there only with a token, opens only to that token, and answers Prometheus' text format;
a worker's metrics port asks for the same token."""

from __future__ import annotations

from wsgiref.util import setup_testing_defaults

import pytest
from prometheus_client import make_wsgi_app
from prometheus_client.parser import text_string_to_metric_families

from graphs.metrics.counters import REGISTRY
from graphs.metrics.worker import _guarded

pytestmark = pytest.mark.django_db

TOKEN = "s3cret-scrape-token"


@pytest.fixture
def token(settings):
    settings.WORKGRAPH_METRICS_TOKEN = TOKEN
    return TOKEN


def test_without_a_token_configured_there_is_no_metrics_page(client, settings):
    settings.WORKGRAPH_METRICS_TOKEN = ""

    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers={"Authorization": "Bearer anything"}).status_code == 404


def test_without_a_bearer_token_it_asks_for_one(client, token):
    response = client.get("/metrics")

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert "workgraph_" not in response.text


@pytest.mark.parametrize("authorization", ["Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer "])
def test_a_wrong_token_is_refused_and_the_answer_tells_nothing(client, token, authorization):
    response = client.get("/metrics", headers={"Authorization": authorization})

    assert response.status_code in (401, 403)
    assert TOKEN not in response.text and "workgraph_" not in response.text


def test_the_right_token_gets_the_metrics_in_prometheus_text_format(client, token):
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert response["Cache-Control"] == "no-store"
    names = {family.name for family in text_string_to_metric_families(response.text)}
    assert "workgraph_runs" in names
    assert all(name.startswith("workgraph_") for name in names), sorted(names)


def test_only_get_is_answered(client, token):
    assert client.post("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 405


@pytest.mark.parametrize(("authorization", "status"), [
    ("", "401 Unauthorized"), ("Bearer wrong", "403 Forbidden"), (f"Bearer {TOKEN}", "200 OK"),
])
def test_a_workers_metrics_port_asks_for_the_same_token(token, authorization, status):
    environ = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    setup_testing_defaults(environ)
    answered = []
    body = b"".join(_guarded(make_wsgi_app(REGISTRY))(environ, lambda code, headers: answered.append(code)))

    assert answered == [status]
    assert (b"workgraph_" in body) == (status == "200 OK")
    assert b"workgraph_runs" not in body  # the database's gauges are the console's alone
