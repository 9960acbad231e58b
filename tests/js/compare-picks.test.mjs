// Unit tests of static/js/compare-picks.js: which two picks of the runs list lead to a compare page.
import assert from "node:assert/strict";
import { test } from "node:test";

import { comparePlan, picksToggled } from "../../static/js/compare-picks.js";

const urls = { runs: "/runs/{a}/compare/{b}/", attempts: "/executions/{a}/compare/{b}/" };
const run = (id, taskId = "t1") => ({ kind: "run", id, taskId, label: `run ${id}` });
const attempt = (id, nodeId, taskId = "t1") => ({ kind: "attempt", id, taskId, nodeId, label: `${nodeId} ${id}` });

test("two runs of one task lead to the runs' compare page, in the order they were ticked", () => {
  assert.equal(comparePlan([run("r1"), run("r2")], urls).href, "/runs/r1/compare/r2/");
});

test("two attempts of one node lead to the attempts' compare page", () => {
  assert.equal(comparePlan([attempt("e1", "coder_unit"), attempt("e2", "coder_unit")], urls).href,
    "/executions/e1/compare/e2/");
});

test("a pair the compare pages refuse leads nowhere, and names the sentence that says why", () => {
  const cases = [
    [[run("r1", "t1"), run("r2", "t2")], "tasks-run", {}],
    [[attempt("e1", "a", "t1"), attempt("e2", "a", "t2")], "tasks-attempt", {}],
    [[attempt("e1", "a"), attempt("e2", "b")], "nodes", { first: "a", second: "b" }],
    [[run("r1"), attempt("e1", "a")], "mixed", {}],
    [[run("r1"), run("r2"), run("r3")], "too-many", { count: "3" }],
    [[run("r1")], "one-run", { first: "run r1" }],
    [[attempt("e1", "a")], "one-attempt", { first: "a e1" }],
    [[], "none", {}],
  ];
  for (const [picks, said, slots] of cases) {
    const plan = comparePlan(picks, urls);
    assert.equal(plan.href, null);
    assert.equal(plan.said, said);
    assert.deepEqual(plan.slots, slots);
  }
});

test("a pair that leads somewhere is named by both labels", () => {
  assert.deepEqual(comparePlan([run("r1"), run("r2")], urls).slots, { first: "run r1", second: "run r2" });
});

test("ticking twice keeps one pick, unticking removes it", () => {
  let picks = picksToggled([], run("r1"), true);
  picks = picksToggled(picks, run("r1"), true);
  assert.deepEqual(picks.map((pick) => pick.id), ["r1"]);
  assert.deepEqual(picksToggled(picks, run("r1"), false), []);
});
