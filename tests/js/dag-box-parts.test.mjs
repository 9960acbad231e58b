// Unit tests of what a run graph's box draws (static/js/dag/box-parts.js, labels.js): the cost whole, in
// cents, and a marker for failed tool calls with the server's words: `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import "./vocabulary.mjs";
import { boxParts } from "../../static/js/dag/box-parts.js";
import { boxFacts } from "../../static/js/dag/labels.js";
import { SIZE } from "../../static/js/dag/theme.js";

// labels.js measures text with a canvas: a stand-in measuring 7 px a character.
globalThis.document = {
  createElement: () => ({ getContext: () => ({ font: "", measureText: (text) => ({ width: text.length * 7 }) }) }),
};

const FAILURES = { count: 2, first: "Bash: <exit 127> command not found", words: "2 tool calls failed" };

function nodeBox({ cost = 0.4123, attempts = 1, failures = null, org = "validator" } = {}) {
  const node = {
    node_id: "write-contributing-guide", label: "write-contributing-guide", kind: "generic", org_node: org,
    status: "succeeded", attempts, cost_usd: cost, latest_exec_id: "e2",
  };
  const attemptsByExec = new Map([
    ["e1", { node_exec_id: "e1", tool_failures: FAILURES }],
    ["e2", { node_exec_id: "e2", ...(failures ? { tool_failures: failures } : {}) }],
  ]);
  return { id: node.node_id, kind: "node", x: 0, y: 0, ...SIZE.node, node, attempts: attemptsByExec };
}

const texts = (parts) => parts.filter((part) => part.t === "text");

test("a box's cost reads whole, in cents, beside the attempt badge and the org pill", () => {
  const parts = texts(boxParts(nodeBox({ attempts: 3 })));
  assert.deepEqual(parts.filter((part) => part.cls === "dag-cost").map((part) => part.text), ["$0.41"]);
  assert.ok(parts.some((part) => part.text === "×3"));
  assert.equal(parts.find((part) => part.title).text, "write-contributing-guide", "the badge does not cut the name");
  assert.ok(!parts.some((part) => part.text.includes("$") && part.text.includes("…")));
});

test("a cost under a cent reads as such, and none is drawn when nothing was spent", () => {
  assert.ok(texts(boxParts(nodeBox({ cost: 0.0004 }))).some((part) => part.text === "< $0.01"));
  assert.ok(!texts(boxParts(nodeBox({ cost: null }))).some((part) => part.cls === "dag-cost"));
});

test("a node whose latest attempt had failed tool calls is marked, with the server's words as its tooltip", () => {
  const marker = texts(boxParts(nodeBox({ failures: FAILURES }))).find((part) => part.cls === "dag-tool-failures");
  assert.equal(marker.text, "⚠ 2");
  assert.equal(marker.tip, "2 tool calls failed: Bash: <exit 127> command not found");
  assert.ok(boxFacts(nodeBox({ failures: FAILURES })).includes(marker.tip), "the hover card says it too");
});

test("only the latest attempt's failed tool calls mark a box", () => {
  const parts = texts(boxParts(nodeBox()));
  assert.ok(!parts.some((part) => part.cls === "dag-tool-failures"));
  assert.ok(!boxFacts(nodeBox()).some((line) => line.includes("tool calls failed")));
});
