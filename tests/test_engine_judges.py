"""A judgment kind nothing registers fails its output, never passes it."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from tests.run_builders import latest, planned_run

pytestmark = pytest.mark.django_db


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
