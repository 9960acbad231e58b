"""Usage an agent does not report is unknown, never 0: an OpenAI-compatible server that streams no usage
leaves the call's tokens and cost empty; the attempt's tokens read null in the API and "—" on its node
page, and a total over calls some of which reported nothing reads "at least", over calls none of which
did, "unknown"."""

from __future__ import annotations

import pytest

from graphs.agents import AgentResult
from graphs.engine import run_start
from graphs.reads.node_trace import attempt_trace_header
from graphs.runs.accounting import spend_of
from tests.clients import signed_in
from tests.run_builders import latest, node, planned_run
from tests.test_agent_openai import _SCENARIOS, _call, _runner, _stream_events, endpoint  # noqa: F401

pytestmark = pytest.mark.django_db


def result(text: str, **accounting) -> AgentResult:
    return AgentResult(text=text, raw={"scripted": True}, **accounting)


def test_a_stream_without_usage_leaves_tokens_and_cost_unknown(endpoint, monkeypatch, settings):  # noqa: F811
    settings.WORKGRAPH_MODEL_PRICES = {"test-model": (1.0, 2.0)}
    monkeypatch.setitem(_SCENARIOS, "no_usage",
                        lambda handler: handler.send_events([event for event in _stream_events()
                                                             if b'"usage"' not in event]))
    endpoint.scenario = "no_usage"

    answer = _runner(endpoint).run(_call())

    assert answer.text == "Hello world\nsecond line\nthird"
    assert (answer.usage, answer.cost_usd) == (None, None)


@pytest.fixture
def unreported(task, scripted_runner, inline_executor):
    """A run of two nodes: ``known`` reports usage and cost, ``silent`` neither."""
    scripted_runner.replies[("node", "known")] = result("done", usage={"input_tokens": 100, "output_tokens": 20},
                                                        cost_usd=0.5)
    scripted_runner.replies[("node", "silent")] = result("done", usage=None, cost_usd=None)
    run = planned_run(task, {"nodes": [node("known"), node("silent")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    return run


def test_an_attempt_whose_calls_reported_no_usage_has_null_tokens_in_the_api(unreported, alice):
    silent, known = latest(unreported)["silent"], latest(unreported)["known"]
    client = signed_in(alice)

    detail = client.get(f"/api/executions/{silent.pk}").json()
    listed = {item["node_id"]: item for item in client.get(f"/api/runs/{unreported.run_id}").json()["executions"]}

    for shown in (detail, listed["silent"]):
        assert [shown[name] for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                                         "cache_read_input_tokens")] == [None] * 4
        assert (shown["cost_usd"], shown["calls_without_usage"], shown["calls_without_cost"]) == (None, 1, 1)
    assert (listed["known"]["input_tokens"], listed["known"]["calls_without_usage"]) == (100, 0)
    assert known.input_tokens == 100


def test_the_node_page_shows_unknown_tokens_as_a_dash(unreported):
    header = attempt_trace_header(execution=latest(unreported)["silent"])

    assert (header.tokens, header.tokens_detail, header.cost) == ("—", "", "—")


def test_a_runs_total_over_some_unknown_attempts_reads_at_least(unreported, alice):
    spend = spend_of(unreported.executions.all())

    assert (spend.calls_without_usage, spend.calls_without_cost) == (1, 1)
    assert spend.summary() == "at least $0.5000 · at least 120 tokens · 2 agent calls"
    assert spend.cost_text() == "at least $0.5000"
    page = signed_in(alice).get(f"/runs/{unreported.run_id}/").content.decode()
    assert '<span id="run-spend">at least $0.5000 · at least 120 tokens · 2 agent calls</span>' in page
    graph = signed_in(alice).get(f"/runs/{unreported.run_id}/graph.json").json()
    attempts = {attempt["node_id"]: attempt for attempt in graph["attempts"]}
    assert (attempts["known"]["tokens"], attempts["silent"]["tokens"]) == (120, None)
    # What the page's script sums into the same words (static/js/spend.js).
    assert (attempts["silent"]["calls_without_usage"], attempts["silent"]["calls_without_cost"]) == (1, 1)


def test_a_total_over_attempts_none_of_which_reported_reads_unknown(task, scripted_runner, inline_executor):
    scripted_runner.replies[("node", "silent")] = result("done", usage=None, cost_usd=None)
    run = planned_run(task, {"nodes": [node("silent")], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    spend = spend_of(run.executions.all())

    assert spend.tokens is None
    assert spend.summary() == "cost not reported · tokens unknown · 1 agent call"
