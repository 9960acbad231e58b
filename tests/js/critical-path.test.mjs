// Unit tests of static/js/dag/critical-path.js: `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { criticalPath, durationLabel } from "../../static/js/dag/critical-path.js";

const at = (seconds) => new Date(Date.UTC(2026, 11, 1, 12, 0, seconds)).toISOString();
const attempt = (id, nodeId, start, end, extra = {}) => ({
  node_exec_id: id, node_id: nodeId, attempt: 1, cause: "initial", started_at: at(start), finished_at: end === null ? null : at(end), ...extra,
});

test("the path follows the dependency that ended last", () => {
  const deps = { a: [], fast: ["a"], slow: ["a"], join: ["fast", "slow"] };
  const attempts = [
    attempt("a1", "a", 0, 2), attempt("f1", "fast", 2, 3), attempt("s1", "slow", 2, 9), attempt("j1", "join", 9, 10),
  ];
  assert.deepEqual(criticalPath(attempts, (id) => deps[id]), ["a1", "s1", "j1"]);
});

test("a retry steps back to the node's own failed attempt, a loop-back to the attempt that failed", () => {
  const deps = { spec: [], review: ["spec"] };
  const attempts = [
    attempt("spec1", "spec", 0, 2),
    attempt("rev1", "review", 2, 4),
    attempt("spec2", "spec", 4, 6, { attempt: 2, cause: "loop_back", cause_node_id: "review" }),
    attempt("rev2", "review", 6, 7, { attempt: 2, cause: "loop_back", cause_node_id: "review" }),
  ];
  assert.deepEqual(criticalPath(attempts, (id) => deps[id]), ["spec1", "rev1", "spec2", "rev2"]);
});

test("a running attempt ends the path, and nothing started means no path", () => {
  const attempts = [attempt("a1", "a", 0, 5), attempt("b1", "b", 5, null), attempt("c1", "c", 0, 6)];
  assert.deepEqual(criticalPath(attempts, (id) => ({ a: [], b: ["a"], c: [] })[id], Date.parse(at(8))), ["a1", "b1"]);
  assert.deepEqual(criticalPath([{ node_exec_id: "q", node_id: "a", attempt: 1, started_at: null }], () => []), []);
});

test("durations read in the unit that fits", () => {
  const span = (ms) => ({ started_at: at(0), finished_at: new Date(Date.parse(at(0)) + ms).toISOString() });
  assert.equal(durationLabel(span(850)), "850 ms");
  assert.equal(durationLabel(span(12_340)), "12.3 s");
  assert.equal(durationLabel(span(245_000)), "4 min 05 s");
  assert.equal(durationLabel({ started_at: null }), "");
  assert.equal(durationLabel({ started_at: at(0), finished_at: null }, Date.parse(at(3))), "3.0 s");
});
