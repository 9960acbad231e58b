"""Running the real Claude Code CLI (node_modules/.bin/claude, pinned in package-lock.json) against the
Messages API stand-in (tests/standins/anthropic_api.py), in the console's sandbox.

The CLI reaches the stand-in through the environment the sandbox lets through (``WORKGRAPH_AGENT_ENV``,
which tests/settings.py sets): its address and a key, and the switches that keep it from any other
traffic, telemetry and updates. Each call's retries are bounded so an overloaded stand-in ends the
attempt in seconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.standins.anthropic_api import AnthropicStandIn

CLAUDE_BIN = Path(__file__).resolve().parent.parent / "node_modules" / ".bin" / "claude"
STANDIN_KEY = "sk-ant-standin-key"
# Claude Code's documented switches: no traffic but the model's API (no telemetry, error reports,
# update checks or release notes), no auto-updater, and few retries of a failing request.
QUIET_CLI_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "2",
}


@pytest.fixture
def anthropic_standin(monkeypatch) -> Iterator[AnthropicStandIn]:
    """The stand-in, running, with the console's environment pointing the CLI at it."""
    if not CLAUDE_BIN.exists():
        pytest.fail(f"{CLAUDE_BIN} is missing: `make setup` installs the pinned Claude Code CLI")
    standin = AnthropicStandIn()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", STANDIN_KEY)
    for name, value in QUIET_CLI_ENV.items():
        monkeypatch.setenv(name, value)
    yield standin
    standin.close()


@pytest.fixture
def real_claude(settings, anthropic_standin) -> AnthropicStandIn:
    """The engine's agent is the claude runner on the real CLI, its calls answered by the stand-in."""
    settings.WORKGRAPH_AGENT = "claude"
    settings.WORKGRAPH_CLAUDE_BIN = str(CLAUDE_BIN)
    settings.WORKGRAPH_TRANSIENT_RETRIES = 0
    return anthropic_standin
