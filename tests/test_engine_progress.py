"""Progress figures: exact at the end of a stage, and not recounted for every node along the way."""

from __future__ import annotations

import pytest

from graphs.engine import run_start, state
from graphs.logs import events
from graphs.models import WorkGraphRun
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)


def _chain(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


@pytest.fixture
def progress_events(monkeypatch) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(events, "_listeners", [
        lambda payload: seen.append((payload["done"], payload["total"])) if payload["event"] == "progress" else None
    ])
    return seen


@pytest.mark.parametrize(("every_seconds", "fewest", "most"), [(3600.0, 2, 3), (0.0, 30, 31)])
def test_a_chain_reports_its_progress_throttled_and_ends_exact(
    task, scripted_runner, inline_executor, progress_events, monkeypatch, every_seconds, fewest, most
):
    monkeypatch.setattr(state, "PROGRESS_EVERY_SECONDS", every_seconds)
    run = planned_run(task, _chain(30))

    run_start(run=run)
    inline_executor.drain()

    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert progress_events[-1] == (30, 30)
    assert fewest <= len(progress_events) <= most, progress_events
