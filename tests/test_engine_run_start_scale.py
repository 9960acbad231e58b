"""Starting a run costs the same statements whatever its size: every node's first attempt in one pass."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.engine import run_start
from graphs.executors import InlineExecutor, executor_set
from tests.factories import SkillFactory
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db


def _started(task, size: int, skills) -> tuple[int, dict]:
    nodes = [{**node(f"n{index}"), "skill_ref": skills[index % len(skills)].skill_id} for index in range(size)]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    previous = executor_set(InlineExecutor())  # the jobs it queues are kept, not run
    try:
        with CaptureQueriesContext(connection) as queries:
            run_start(run=run)
    finally:
        executor_set(previous)
    return len(queries), dict(run.executions.exclude(skill_ref=None).values_list("node_id", "skill_ref__skill_id"))


def test_a_run_of_many_nodes_naming_skills_starts_with_the_statements_of_a_small_one(task):
    skills = [SkillFactory(skill_id="research"), SkillFactory(skill_id="review")]

    small, _ = _started(task, 4, skills)
    large, named = _started(task, 200, skills)

    assert large == small
    assert named["n0"] == "research" and named["n199"] == "review" and len(named) == 200
