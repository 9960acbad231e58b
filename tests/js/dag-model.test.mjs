// Unit tests of static/js/dag/model.js's live updates: `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { costLabel } from "../../static/js/dag/labels.js";
import { modelApplyUpdates, modelFromPayload } from "../../static/js/dag/model.js";

function payload() {
  return {
    run: { run_id: "r" },
    nodes: [{ node_id: "build", label: "build", kind: "generic", status: "running", attempts: 1, cost_usd: 0.2 }],
    edges: [],
    attempts: [{ node_exec_id: "e1", node_id: "build", attempt: 1, cause: "initial", status: "failed", cost_usd: 0.2 }],
    statuses: { finished: ["blocked", "cancelled", "failed", "partial", "succeeded"], active: ["pending", "queued", "running"] },
  };
}

test("an ended attempt's cost is added to its node once, at its latest figure", () => {
  const model = modelFromPayload(payload());

  modelApplyUpdates(model, [{ node_exec_id: "e2", node_id: "build", attempt: 2, status: "running", cause: "retry" }]);
  modelApplyUpdates(model, [{ node_exec_id: "e2", node_id: "build", attempt: 2, status: "succeeded", cost_usd: 0.05 }]);
  modelApplyUpdates(model, [{ node_exec_id: "e2", node_id: "build", attempt: 2, status: "succeeded", cost_usd: 0.05 }]);

  assert.ok(Math.abs(model.nodes.get("build").cost_usd - 0.25) < 1e-9);
  assert.equal(costLabel(model.nodes.get("build")), "$0.2500");
});

test("an attempt that ends in any finished status graph.json names gets its end time, partial included", () => {
  const model = modelFromPayload(payload());

  modelApplyUpdates(model, [{ node_exec_id: "e2", node_id: "build", attempt: 2, status: "running", cause: "retry" }]);
  assert.equal(model.attemptsByExec.get("e2").finished_at, null);
  modelApplyUpdates(model, [{ node_exec_id: "e2", node_id: "build", attempt: 2, status: "partial" }]);

  assert.ok(model.attemptsByExec.get("e2").finished_at);
});
