"""``manage.py plan`` makes its planning run the one way the page and the API do (``plan_fresh``): under
the project's budget, and refused — a CommandError naming the run, nothing created — while another run
of the task is under way."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from graphs.engine import plan_fresh
from graphs.models import WorkGraphRun

pytestmark = pytest.mark.django_db


def test_the_planning_run_gets_the_projects_budget(project, task, scripted_runner, capsys):
    project.max_run_cost_usd = Decimal("1.50")
    project.save(update_fields=["max_run_cost_usd"])
    scripted_runner.replies[("plan", "planner")] = json.dumps({"nodes": [{"node_id": "a", "task_prompt": "Do a."}]})

    call_command("plan", str(task.pk))

    run = WorkGraphRun.objects.get(task=task)
    assert run.max_cost_usd == Decimal("1.50")
    assert f"run: {run.run_id} ({run.status})" in capsys.readouterr().out


def test_it_is_refused_while_another_run_of_the_task_is_under_way(task, scripted_runner, inline_executor):
    under_way = plan_fresh(task=task)  # queued by the page or the API, not yet planned

    with pytest.raises(CommandError, match=f"refused: task {task.pk} already has run {under_way.run_id} under way"):
        call_command("plan", str(task.pk))

    assert list(WorkGraphRun.objects.filter(task=task)) == [under_way]
    assert scripted_runner.calls == []
