"""The run page links to the run's trace in the team's tool when WORKGRAPH_TRACE_URL_TEMPLATE is set."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db

TEMPLATE = "https://phoenix.example/projects/UHJvamVjdDox/traces/{trace_id}"


def _page(user, run) -> str:
    client = Client()
    client.force_login(user)
    return client.get(f"/runs/{run.run_id}/").content.decode()


def test_a_run_with_a_trace_links_to_it(alice, task, settings):
    settings.WORKGRAPH_TRACE_URL_TEMPLATE = TEMPLATE
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run.trace_id = run.run_id.hex
    run.save(update_fields=["trace_id"])

    html = _page(alice, run)

    assert f'href="https://phoenix.example/projects/UHJvamVjdDox/traces/{run.run_id.hex}"' in html
    assert 'id="run-trace"' in html


@pytest.mark.parametrize("template, traced", [("", True), (TEMPLATE, False)])
def test_no_link_without_a_template_or_before_the_runs_first_span(alice, task, settings, template, traced):
    settings.WORKGRAPH_TRACE_URL_TEMPLATE = template
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    if traced:
        run.trace_id = run.run_id.hex
        run.save(update_fields=["trace_id"])

    assert 'id="run-trace"' not in _page(alice, run)
