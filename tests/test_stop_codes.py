"""Why a run was stopped early is one vocabulary, ``WorkGraphRun.StopCode``: the budget and a rejected
append write its codes, and no other module of the code spells one out."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from graphs.models import WorkGraphRun
from graphs.runs.budgets import budget_stop
from tests.run_builders import node, planned_run

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / "graphs" / "models" / "runs.py"


def test_no_module_but_the_models_spells_a_stop_code():
    spelled = re.compile("|".join(rf"[\"']{re.escape(code)}[\"']" for code in WorkGraphRun.StopCode.values))
    sources = [path for top in ("graphs", "console") for path in (ROOT / top).rglob("*.py")
               if path != HOME and "migrations" not in path.parts]

    assert [str(path.relative_to(ROOT)) for path in sources if spelled.search(path.read_text())] == []


@pytest.mark.django_db
def test_a_run_its_budget_stopped_carries_the_budget_s_stop_code(task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    run.max_cost_usd = Decimal("0.5")

    budget_stop(run, spent=Decimal("1"))

    run.refresh_from_db()
    assert (run.status, run.error_code) == ("failed", WorkGraphRun.StopCode.BUDGET_EXCEEDED)
