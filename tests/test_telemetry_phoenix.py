"""A run's trace reaches a real OpenTelemetry receiver, Arize Phoenix (from PyPI), over OTLP/HTTP: the
offline pipeline's run, planning calls and attempts, and a Claude node's agent call with its tool calls
under the GenAI conventions, found again by querying Phoenix's REST API. Under ``CI=true`` a Phoenix
that is missing or cannot start fails the test."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from graphs.engine import pipeline_start, run_start
from graphs.models import WorkGraphRun
from graphs.telemetry.export import telemetry_flush, telemetry_stop
from tests.celery_worker import wait_until
from tests.conftest import IN_CI
from tests.phoenix_server import phoenix_start
from tests.run_builders import latest, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 60.0


@pytest.fixture
def phoenix(tmp_path):
    if importlib.util.find_spec("phoenix") is None:
        message = "arize-phoenix is not installed (the test extras install it)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    server = phoenix_start(tmp_path / "phoenix")
    yield server
    server.stop()


@pytest.fixture
def traced(phoenix, monkeypatch):
    """The console's traces go to the test's Phoenix, from an exporter started for it."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.url)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "workgraph-test")
    telemetry_stop()
    yield phoenix
    telemetry_stop()


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """Phoenix may answer attributes nested ({"gen_ai": {"operation": …}}): read them as dotted names."""
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, inner in value.items():
        flat.update(_flat(inner, f"{prefix}.{key}" if prefix else key))
    return flat


def _trace(phoenix, run: WorkGraphRun, *, expected: int) -> list[dict[str, Any]]:
    """The spans of the run's trace in Phoenix, once it holds at least ``expected`` of them and the run's own
    span, the root: it ends after every span under it, so Phoenix may take it in after they have come."""
    assert telemetry_flush(TIMEOUT)
    run.refresh_from_db()
    assert len(run.trace_id) == 32
    found: list[dict[str, Any]] = []

    def arrived() -> bool:
        found[:] = [span for span in phoenix.spans() if span["context"]["trace_id"] == run.trace_id]
        return len(found) >= expected and any(not span.get("parent_id") for span in found)

    wait_until(arrived, timeout=TIMEOUT, poll=0.5,
               message=lambda: f"{len(found)} of {expected} spans in Phoenix: {[s['name'] for s in found]}")
    for span in found:
        span["attributes"] = _flat(span.get("attributes") or {})
    return found


def test_the_offline_pipelines_run_is_one_trace_of_its_planning_calls_and_attempts(traced, task, inline_executor):
    pipeline_start(task=task)
    inline_executor.drain()
    run = WorkGraphRun.objects.get(task=task)
    assert run.status == "succeeded"
    attempts = run.executions.count()

    spans = _trace(traced, run, expected=1 + attempts)

    by_id = {span["context"]["span_id"]: span for span in spans}
    roots = [span for span in spans if not span.get("parent_id")]
    assert [root["name"] for root in roots] == [f"run {task.title}"]
    assert roots[0]["attributes"]["workgraph.run.status"] == "succeeded"
    plans = sorted(span["name"] for span in spans if span["name"].startswith("plan "))
    assert plans == ["plan coder", "plan planner", "plan validator"]
    nodes = [span for span in spans if span["name"].startswith("node ")]
    assert {span["attributes"]["workgraph.node.id"] for span in nodes} == set(latest(run))
    loop_back = [span for span in nodes if span["attributes"]["workgraph.attempt.cause"] == "loop_back"]
    assert loop_back and all(span["attributes"]["workgraph.attempt"] >= 2 for span in loop_back)
    for span in nodes:
        assert by_id[span["parent_id"]]["name"] == f"run {task.title}"
    calls = [span for span in spans if span["attributes"].get("gen_ai.operation.name") == "invoke_agent"]
    assert calls and {span["attributes"]["gen_ai.provider.name"] for span in calls} == {"workgraph.offline"}


def test_a_claude_nodes_call_and_its_tool_calls_follow_the_genai_conventions(traced, task, claude_cli,
                                                                              inline_executor):
    claude_cli("streaming.json")
    run = planned_run(task, {"nodes": [node("survey")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    assert run.status == "succeeded"

    spans = _trace(traced, run, expected=1 + 1 + 1 + 3)

    (call,) = [span for span in spans if span["attributes"].get("gen_ai.operation.name") == "invoke_agent"
               and span["attributes"].get("workgraph.call.purpose") == "node"]
    attributes = call["attributes"]
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.request.model"] == "claude-sonnet-4-5-20250929"
    assert attributes["gen_ai.response.model"] == "claude-sonnet-4-5-20250929"
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (12, 1874)
    assert attributes["gen_ai.agent.name"]
    assert "gen_ai.input.messages" not in attributes  # content stays out unless asked for
    tools = [span for span in spans if span.get("parent_id") == call["context"]["span_id"]]
    assert len(tools) == 3
    assert {span["attributes"]["gen_ai.operation.name"] for span in tools} == {"execute_tool"}
    assert all(span["name"] == f"execute_tool {span['attributes']['gen_ai.tool.name']}" for span in tools)
    (attempt,) = [span for span in spans if span["name"] == "node survey"]
    assert call["parent_id"] == attempt["context"]["span_id"]
    assert attempt["attributes"]["workgraph.attempt.status"] == "succeeded"
