"""Runs for the run graph's browser tests: the demo's shape (14 work nodes in three stages, two of them
with long names that read the same when cut), its attempts spread over a minute, and a graph too big to
fit legibly."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from graphs.models import WorkGraphRun
from tests import factories
from tests.graphs import edges_for, planned_run

# Two names longer than a box, alike up to their last letter: cut plainly, both read "review-backend-cas…".
TWINS = ("review-backend-cascade-invalidation-a", "review-backend-cascade-invalidation-b")
DEMO_SHAPE = (
    ("planner", "brd", ()),
    ("planner", "prd", ("brd",)),
    ("planner", "sdd", ("prd",)),
    ("planner", "benchmark", ("prd", "sdd")),
    ("planner", "test_dataset", ("benchmark",)),
    ("planner", "test_script", ("benchmark", "test_dataset")),
    ("coder", "coder_impl", ("sdd", "benchmark")),
    ("coder", "coder_unit_test", ("coder_impl",)),
    ("coder", "coder_integration_check", ("coder_impl", "coder_unit_test")),
    ("validator", TWINS[0], ("prd",)),
    ("validator", TWINS[1], (TWINS[0],)),
    ("validator", "validator_test_script", (TWINS[0], TWINS[1])),
    ("validator", "validator_run_test_script", ("validator_test_script", "coder_integration_check")),
    ("validator", "validator_final_verdict", (TWINS[0], "validator_run_test_script", "coder_integration_check")),
)
# The run took 56 s: each node's attempts as (start, seconds, cause), seconds after the first start.
DEMO_TIMES = {
    "brd": [(0, 3, "initial")], "prd": [(3, 3, "initial"), (13, 3, "loop_back")],
    "sdd": [(6, 3, "initial"), (16, 3, "loop_back")], "benchmark": [(9, 3, "initial"), (19, 3, "loop_back")],
    "test_dataset": [(22, 2, "initial")], "test_script": [(24, 3, "initial")],
    "coder_impl": [(28, 4, "initial")], "coder_unit_test": [(32, 3, "initial")],
    "coder_integration_check": [(35, 4, "initial")],
    TWINS[0]: [(40, 3, "initial")], TWINS[1]: [(43, 3, "initial")], "validator_test_script": [(46, 4, "initial")],
    "validator_run_test_script": [(50, 3, "initial")], "validator_final_verdict": [(53, 3, "initial")],
}
RUN_SECONDS = 56


def demo_like_run(task) -> WorkGraphRun:
    """A finished run of the demo's shape, its attempts (with costs) spread over RUN_SECONDS."""
    nodes = [
        {"node_id": node_id, "depends_on": list(deps), "subagent_type": org, "task_prompt": f"Do {node_id}."}
        for org, node_id, deps in DEMO_SHAPE
    ]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="succeeded")
    t0 = timezone.now() - timedelta(hours=1)
    run.executions.update(started_at=t0 - timedelta(seconds=2), finished_at=t0 - timedelta(seconds=1))
    org_of = {node_id: org for org, node_id, _ in DEMO_SHAPE}
    for node_id, attempts in DEMO_TIMES.items():
        for number, (start, seconds, cause) in enumerate(attempts, start=1):
            factories.ExecutionFactory(
                run=run, node_id=node_id, subagent_type=org_of[node_id], status="succeeded", attempt=number,
                cause=cause, cause_node_id="benchmark" if cause == "loop_back" else "",
                started_at=t0 + timedelta(seconds=start), finished_at=t0 + timedelta(seconds=start + seconds),
                cost_usd="0.0400",
            )
    return run


def wide_run(task, *, layers: int, width: int) -> WorkGraphRun:
    """``layers`` rows of ``width`` coder nodes, each needing one of the row above: too big to fit legibly."""
    nodes = [
        {"node_id": f"n{layer}_{slot}", "subagent_type": "coder",
         "depends_on": [f"n{layer - 1}_{(slot + 1) % width}"] if layer else []}
        for layer in range(layers)
        for slot in range(width)
    ]
    return planned_run(task, {"nodes": nodes, "edges": []})


# For page.wait_for_function: the run graph is fitted — every box wholly on its stage when the graph fits
# legibly, else at a legible zoom (data-fit "legible", titles at least 11 px tall).
FITTED = """
() => {
  const dag = document.querySelector('#dag');
  if (dag.dataset.fit === 'legible') return Number(dag.dataset.minLabelPx) >= 11;
  const stage = dag.querySelector('.dag-stage').getBoundingClientRect();
  const boxes = [...dag.querySelectorAll('.dag-box[data-node-id]')];
  return boxes.length > 0 && boxes.every((box) => {
    const r = box.getBoundingClientRect();
    return r.left >= stage.left - 1 && r.right <= stage.right + 1
      && r.top >= stage.top - 1 && r.bottom <= stage.bottom + 1;
  });
}
"""
