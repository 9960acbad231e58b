"""An agent that answers at once, so a benchmark measures the engine and nothing else.

Installed as a Django app by ``tests.bench.instant_settings``: its ``ready`` hook registers the runner
under the name ``instant`` in every process that loads those settings (the benchmark, its Celery
workers), which is where ``get_runner`` looks it up.
"""

from __future__ import annotations

from django.apps import AppConfig

from graphs.agents import AgentCall, AgentResult, runner_register


class InstantRunner:
    name = "instant"

    def run(self, call: AgentCall) -> AgentResult:
        return AgentResult(text=f"done: {(call.node or {}).get('node_id')}", raw=None, usage=None)


class InstantAgentConfig(AppConfig):
    name = "tests.bench"
    label = "bench_instant_agent"

    def ready(self) -> None:
        runner_register("instant", InstantRunner)
