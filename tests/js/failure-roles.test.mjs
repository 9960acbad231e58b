// Unit tests of static/js/dag/failure-roles.js: `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { failureRoleLabel, failureRoles } from "../../static/js/dag/failure-roles.js";
import { modelApplyUpdates, modelFromPayload } from "../../static/js/dag/model.js";

const { cases } = JSON.parse(readFileSync(new URL("../fixtures/failure_roles.json", import.meta.url)));

for (const example of cases) {
  test(`failure roles: ${example.name}`, () => {
    const roles = failureRoles(new Map(Object.entries(example.dependencies)), new Map(Object.entries(example.statuses)));
    assert.deepEqual(Object.fromEntries(roles), example.roles);
  });
}

test("a box names the root causes a node is blocked by, and shortens a long list", () => {
  assert.equal(failureRoleLabel({ role: "root_cause", because_of: [] }), "root cause");
  assert.equal(failureRoleLabel({ role: "blocked", because_of: ["spec"] }), "blocked by spec");
  assert.equal(failureRoleLabel({ role: "blocked", because_of: [] }), "blocked");
  assert.equal(failureRoleLabel({ role: "failed_downstream", because_of: ["a", "b", "c"] }), "failed after a, b +1");
  assert.equal(failureRoleLabel(undefined), "");
});

test("live updates move the root cause: a node that fails above an earlier failure becomes the root", () => {
  const model = modelFromPayload({
    run: {},
    nodes: [
      { node_id: "spec", kind: "generic", status: "succeeded", attempts: 1, depends_on: [] },
      { node_id: "check", kind: "generic", status: "failed", attempts: 1, depends_on: ["spec"],
        failure_role: { role: "root_cause", because_of: [] } },
    ],
    edges: [],
    attempts: [],
  });
  assert.equal(model.nodes.get("check").failure_role.role, "root_cause");

  modelApplyUpdates(model, [{ node_exec_id: "s2", node_id: "spec", attempt: 2, status: "failed" }]);

  assert.deepEqual(model.nodes.get("spec").failure_role, { role: "root_cause", because_of: [] });
  assert.deepEqual(model.nodes.get("check").failure_role, { role: "failed_downstream", because_of: ["spec"] });

  modelApplyUpdates(model, [{ node_exec_id: "s3", node_id: "spec", attempt: 3, status: "succeeded" }]);

  assert.equal(model.nodes.get("spec").failure_role, undefined);
  assert.equal(model.nodes.get("check").failure_role.role, "root_cause");
});
