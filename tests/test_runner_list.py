"""The agent runners the console ships are one list (graphs.domain.runners): each name is built by
``get_runner`` as its own runner, chosen by the setting, and named a provider in traces."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphs.agents import get_runner, runner_names
from graphs.domain.runners import CHAT_RUNNERS, RUNNER_PROVIDERS, RUNNERS

ROOT = Path(__file__).resolve().parent.parent


def test_get_runner_builds_each_runner_the_list_names_and_knows_them_all(settings):
    settings.WORKGRAPH_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    built = {name: type(get_runner(name)).__name__.removesuffix("Runner").lower() for name in RUNNERS}

    assert built == {name: name for name in RUNNERS}
    assert set(RUNNERS) <= set(runner_names())


def test_every_runner_has_a_provider_and_the_chat_runners_are_runners():
    assert set(RUNNER_PROVIDERS) == set(RUNNERS)
    assert CHAT_RUNNERS <= set(RUNNERS)


@pytest.mark.parametrize(("agent", "accepted"), [("codex", True), ("no-such-runner", False)])
def test_the_setting_chooses_from_the_list(agent, accepted):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "WORKGRAPH_AGENT": agent}
    result = subprocess.run([sys.executable, "-c", "from django.conf import settings; print(settings.WORKGRAPH_AGENT)"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    assert (result.returncode == 0) == accepted, result.stderr
    assert (result.stdout.strip() == agent) == accepted
