"""Every judgment kind a manifest may use has a judge; one without is refused at start-up, never passed."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from graphs.engine import JUDGES, judges_check, run_start
from graphs.manifest import JUDGMENT_KINDS
from tests.graphs import latest, planned_run

pytestmark = pytest.mark.django_db


def test_every_judgment_kind_of_the_manifest_has_a_judge():
    assert set(JUDGMENT_KINDS) <= set(JUDGES)
    judges_check()


def test_a_judgment_kind_without_a_judge_stops_the_start_up(monkeypatch):
    monkeypatch.delitem(JUDGES, "llm")
    with pytest.raises(ImproperlyConfigured, match="no judge for judgment kind 'llm'"):
        apps.get_app_config("graphs").ready()


def test_an_output_of_a_kind_nothing_judges_fails_instead_of_passing(task, scripted_runner, inline_executor):
    # A manifest validated elsewhere (an older version of the kinds) reaches the engine unchanged.
    manifest = {"nodes": [{"node_id": "a", "task_prompt": "do it", "depends_on": [], "judgment": {"kind": "vibes"},
                           "on_fail": {"action": "hard_fail"}}], "edges": []}
    run = planned_run(task, manifest)
    run_start(run=run)
    inline_executor.drain()

    attempt = latest(run)["a"]
    assert attempt.status == "failed"
    assert attempt.judgment_result["issues"] == ["no judge for judgment kind 'vibes'"]
    run.refresh_from_db()
    assert run.status == "failed"
