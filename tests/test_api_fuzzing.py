"""Schemathesis generates requests from the live OpenAPI schema: no 5xx, no answer outside the schema.

Runs as the lead persona with a seeded project, so generated requests reach real objects' code paths
as well as the not-found ones: one operation at a time, then (the stateful phase) sequences of calls
chained by the links Schemathesis infers between operations — a created task planned, its run
started, cancelled or forked — each in whatever state the calls before it left.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from graphs.engine import run_start
from graphs.tokens import token_create
from tests.run_builders import edges_for, node, planned_run


@pytest.fixture
def api_schema(db):
    # As Django's test client does: keep the test's connection (and its transaction) open across requests.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def lead_token(alice, task, scripted_runner, inline_executor) -> str:
    nodes = [node("a"), node("b", "a")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    _, raw = token_create(user=alice, name="fuzz")
    return raw


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _headers(token: str) -> dict[str, str]:
    # Schemathesis's WSGI transport asks for gzip, as requests does, but hands the body on undecoded; an
    # HTTP client decodes it (tests/test_response_compression.py checks the compressed answers).
    return {"Authorization": f"Bearer {token}", "Accept-Encoding": "identity"}


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_generated_requests_get_no_server_error_and_match_the_schema(case, lead_token):
    case.call_and_validate(headers=_headers(lead_token), checks=CHECKS)


def test_sequences_of_calls_chained_through_their_results_get_no_server_error(api_schema, lead_token):
    machine = api_schema.as_state_machine()
    assert "POST /api/tasks -> 201" in machine.bundles, "no links to chain calls through"

    class AsTheLead(machine):
        # Every scenario starts from the seeded database: Hypothesis replays a scenario to shrink it,
        # and a replay must meet the state the first run met, not what earlier scenarios left.
        def setup(self):
            self.savepoint = transaction.savepoint()

        def teardown(self):
            transaction.savepoint_rollback(self.savepoint)

        def get_call_kwargs(self, case):
            return {"headers": _headers(lead_token)}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs)

    AsTheLead.run(settings=settings(
        max_examples=40, stateful_step_count=6, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
    ))
