// Unit tests of static/js/log-line.js against the cases graphs/logs/lines.py is held to: `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { describeLine } from "../../static/js/log-line.js";

const cases = JSON.parse(readFileSync(new URL("../fixtures/log_lines/summaries.json", import.meta.url)));

for (const { line, summary } of cases) {
  test(`a ${line.event} line reads "${summary}"`, () => {
    assert.equal(describeLine(line), summary);
  });
}

test("a line of a kind without words reads as its fields, never blank", () => {
  const line = { seq: 1, ts: "2026-01-01T00:00:00Z", event: "something_new", purpose: "node", count: 2, ids: ["a", "b"],
    detail: { k: true }, done: false };
  assert.equal(describeLine(line), 'count 2 · ids a, b · detail {"k":true} · done no');
});

test("an on_fail loop-back names its target and what reruns", () => {
  const line = { seq: 1, event: "on_fail", action: "loop_back", outcome: "looped_back", target: "prd",
    rerun: ["prd", "sdd", "benchmark"] };
  assert.equal(describeLine(line), "loop_back → prd, rerun prd, sdd, benchmark");
});

test("a judgment's issues stay text, markup and all", () => {
  const line = { seq: 1, event: "judgment", ok: false, kind: "llm", issues: ['<img src=x onerror="x()">'] };
  assert.equal(describeLine(line), 'fail · judged by llm · <img src=x onerror="x()">');
});
