// Unit tests of static/js/spend.js against the cases graphs/runs/accounting.py is held to: `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { costText, spendSummary, spendTotal } from "../../static/js/spend.js";

const cases = JSON.parse(readFileSync(new URL("../fixtures/spend/summaries.json", import.meta.url)));

for (const { spend, summary, cost } of cases) {
  test(`${JSON.stringify(spend)} reads "${summary}"`, () => {
    assert.equal(spendSummary(spend), summary);
    assert.equal(costText(spend), cost);
  });
}

test("a total counts each attempt once, at its latest figures", () => {
  const total = spendTotal();
  total.set({ node_exec_id: "a", agent_calls: 1, cost_usd: 0.5, tokens: 100 });
  total.set({ node_exec_id: "b", agent_calls: 2, cost_usd: null, tokens: 40 });
  total.set({ node_exec_id: "a", agent_calls: 2, cost_usd: 0.75, tokens: 150 });
  total.set({ node_exec_id: "c" });  // a waiting attempt's event says nothing of cost

  assert.deepEqual(total.total, { agent_calls: 4, cost_usd: 0.75, tokens: 190, calls_without_usage: 0,
                                 calls_without_cost: 0 });
});

test("a total of attempts none of which reported a cost has no cost", () => {
  const total = spendTotal();
  total.set({ node_exec_id: "a", agent_calls: 1, cost_usd: null, tokens: 5 });

  assert.equal(spendSummary(total.total), "cost not reported · 5 tokens · 1 agent call");
});

test("a total over an attempt whose usage and cost are unknown reads as a lower bound", () => {
  const total = spendTotal();
  total.set({ node_exec_id: "a", agent_calls: 1, cost_usd: 0.5, tokens: 100, calls_without_usage: 0,
              calls_without_cost: 0 });
  total.set({ node_exec_id: "b", agent_calls: 1, cost_usd: null, tokens: null, calls_without_usage: 1,
              calls_without_cost: 1 });

  assert.equal(spendSummary(total.total), "at least $0.5000 · at least 100 tokens · 2 agent calls");
});
