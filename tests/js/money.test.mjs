// Unit tests of static/js/money.js (and the DAG boxes' cost words) against the cases graphs/domain/money_words.py is held to: `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import "./vocabulary.mjs";
import { boxFacts, costLabel } from "../../static/js/dag/labels.js";
import { usdText } from "../../static/js/money.js";

const cases = JSON.parse(readFileSync(new URL("../fixtures/money/amounts.json", import.meta.url)));

for (const { usd, text, lower_bound: lowerBound } of cases) {
  test(`${usd} reads "${text}", and "${lowerBound}" as a lower bound`, () => {
    assert.equal(usdText(usd), text);
    assert.equal(usdText(usd, { lowerBound: true }), lowerBound);
  });
}

test("a DAG box shows no cost for a node that spent nothing or said nothing, and any other as the pages do", () => {
  assert.equal(costLabel({ cost_usd: null }), "");
  assert.equal(costLabel({ cost_usd: 0 }), "");
  assert.equal(costLabel({ cost_usd: 0.00003 }), "< $0.0001");
  assert.equal(costLabel({ cost_usd: 0.004 }), "$0.0040");
});

test("a box's facts say an attempt's cost as the node page does, a zero one included", () => {
  const node = { node_id: "build", status: "succeeded", attempts: 1 };
  const facts = (cost) => boxFacts({ kind: "attempt", node, attempt: { attempt: 1, status: "succeeded", cost_usd: cost } });

  assert.ok(facts(0.00003).includes("Cost: < $0.0001"));
  assert.ok(facts(0).includes("Cost: $0.0000"));
  assert.ok(facts(null).includes("Cost: not reported"));
});
