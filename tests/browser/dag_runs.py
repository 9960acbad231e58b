"""Runs for the run graph's browser tests: the demo's shape (14 work nodes in three stages, two of them
with long names that read the same when cut), its attempts spread over a minute, pipelines of any size
with names of up to 24 characters, and a graph too big to fit legibly."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.run_builders import edges_for, planned_run

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


# Names of up to 24 characters, most of them exactly 24: a box draws each whole.
NAMES_24 = (
    "write-contributing-guide", "review-contributing-docs", "design-export-data-model", "implement-nightly-export",
    "schedule-the-export-jobs", "unit-test-export-formats", "integration-check-upload", "benchmark-large-exports",
    "document-download-links", "coder_integration_check", "check-spreadsheet-import", "measure-export-durations",
    "review-security-of-links", "validator_test_script", "publish-release-notes", "validator_final_verdict",
    "final-verdict",
)


def pipeline_run(task, stages: dict[str, int]) -> WorkGraphRun:
    """A finished pipeline: for each org node of ``stages`` in turn, a planning call adding that many nodes
    (named from NAMES_24), each needing the node before it and every third the one before that too, each
    attempt costing $0.41."""
    names = iter(NAMES_24)
    shape: list[tuple[str, str, tuple[str, ...]]] = []
    for org, count in stages.items():
        for _ in range(count):
            before = tuple(node_id for _, node_id, _ in shape[-2:])
            shape.append((org, next(names), before[-1:] if len(shape) % 3 else before))
    return staged_run(task, shape)


# A pipeline both deep and wide, 20 boxes with its three planning calls: designs and implementations fanning
# out and joining again over eight layers, two loop-backs, every name at most 24 characters.
DEEP_AND_WIDE = (
    ("planner", "write-product-brief", ()),
    ("planner", "design-export-data-model", ("write-product-brief",)),
    ("planner", "design-download-api", ("write-product-brief",)),
    ("planner", "design-spreadsheet-ui", ("write-product-brief",)),
    ("planner", "review-the-designs", ("design-export-data-model", "design-download-api", "design-spreadsheet-ui")),
    ("planner", "plan-the-test-scenarios", ("review-the-designs",)),
    ("coder", "implement-nightly-export", ("review-the-designs",)),
    ("coder", "implement-download-links", ("review-the-designs",)),
    ("coder", "implement-export-button", ("review-the-designs",)),
    ("coder", "unit-test-export-formats", ("implement-nightly-export",)),
    ("coder", "unit-test-download-links", ("implement-download-links",)),
    ("coder", "integration-check-upload",
     ("unit-test-export-formats", "unit-test-download-links", "implement-export-button")),
    ("validator", "write-acceptance-script", ("plan-the-test-scenarios",)),
    ("validator", "run-acceptance-script", ("write-acceptance-script", "integration-check-upload")),
    ("validator", "measure-export-durations", ("integration-check-upload",)),
    ("validator", "review-security-of-links", ("implement-download-links",)),
    ("validator", "validator_final_verdict",
     ("run-acceptance-script", "measure-export-durations", "review-security-of-links")),
)
DEEP_AND_WIDE_LOOPS = (
    ("run-acceptance-script", "implement-nightly-export"), ("review-the-designs", "design-download-api"),
)


def staged_run(task, shape, loops=()) -> WorkGraphRun:
    """A finished pipeline of ``shape`` (org node, node id, what it needs), with ``loops`` as on_failure
    edges (from, to): for each org node in turn, a planning call adding its nodes, each attempt costing
    $0.41."""
    nodes = [{"node_id": node_id, "subagent_type": org, "depends_on": list(deps), "task_prompt": "Do it."}
             for org, node_id, deps in shape]
    edges = edges_for(nodes) + [{"from": source, "to": target, "edge_type": "on_failure"} for source, target in loops]
    run = planned_run(task, {"nodes": nodes, "edges": edges}, status="succeeded")
    added: dict[str, list[str]] = {}
    for org, node_id, _ in shape:
        added.setdefault(org, []).append(node_id)
    for org in list(added)[1:]:
        WorkNodeExecution.objects.create(
            run=run, node_id=f"{PLANNING_NODE_ID}:{org}", subagent_type=org, attempt=1, cause="planning",
            status="succeeded", output_payload={"new_node_ids": added[org]},
        )
    for item in nodes:
        factories.ExecutionFactory(run=run, node_id=item["node_id"], subagent_type=item["subagent_type"],
                                   status="succeeded", attempt=1, cost_usd="0.4100")
    return run


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
# For page.wait_for_function with a node id: that node's box is wholly inside the drawing's stage.
BOX_IN_VIEW = """
(id) => {
  const stage = document.querySelector('#dag .dag-stage').getBoundingClientRect();
  const box = document.querySelector(`#dag .dag-box[data-node-id="${CSS.escape(id)}"]`);
  if (!box) return false;
  const r = box.getBoundingClientRect();
  return r.left >= stage.left - 1 && r.right <= stage.right + 1
    && r.top >= stage.top - 1 && r.bottom <= stage.bottom + 1;
}
"""


def box_click(page, node_id: str) -> None:
    """Click a node's box of the fitted run graph once it is wholly on the stage: a drawing too big to fit
    legibly is dragged until the box is at the stage's centre first."""
    page.wait_for_function(FITTED)
    page.locator("#dag .dag-stage").scroll_into_view_if_needed()
    if not page.evaluate(BOX_IN_VIEW, node_id):
        stage = page.locator("#dag .dag-stage").bounding_box()
        box = page.locator(f"#dag .dag-box[data-node-id='{node_id}']").bounding_box()
        cx, cy = stage["x"] + stage["width"] / 2, stage["y"] + stage["height"] / 2
        # From the middle of the stage's right edge, clear of the minimap (bottom left) and the legend.
        start = (stage["x"] + stage["width"] - 12, cy)
        page.mouse.move(*start)
        page.mouse.down()
        page.mouse.move(start[0] + cx - box["x"] - box["width"] / 2, start[1] + cy - box["y"] - box["height"] / 2,
                        steps=12)
        page.mouse.up()
    page.wait_for_function(BOX_IN_VIEW, arg=node_id)
    page.click(f"#dag .dag-box[data-node-id='{node_id}']")
