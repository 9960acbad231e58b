// graph.json as sent (graphs/reads/graph_json.py leaves out every field at its default) is put back
// whole by static/js/dag/model.js before anything reads it: `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { modelFromPayload, payloadExpanded } from "../../static/js/dag/model.js";

// The Python test of the same fixture checks that `sent` is what the server sends of `expanded`.
const { sent, expanded } = JSON.parse(readFileSync(new URL("../fixtures/graph_json/payloads.json", import.meta.url)));

test("a payload as sent is expanded to every record whole, labels and explicit nulls included", () => {
  assert.deepEqual(payloadExpanded(sent), expanded);
  const build = payloadExpanded(sent).attempts.find((attempt) => attempt.node_exec_id === "e2");
  assert.equal(build.tokens, null, "an unknown token count stays unknown, not 0");
});

test("an expanded payload is returned as it is", () => {
  assert.equal(payloadExpanded(expanded), expanded);
});

test("records expanded from one default never share its list", () => {
  const nodes = payloadExpanded(sent).nodes.filter((node) => node.depends_on.length === 0);
  assert.ok(nodes.length > 1);
  nodes[0].depends_on.push("brd");
  assert.deepEqual(nodes[1].depends_on, []);
});

test("the model of a payload as sent is the model of the whole one", () => {
  const fromSent = modelFromPayload(sent);
  const fromWhole = modelFromPayload(expanded);
  assert.deepEqual([...fromSent.nodes.values()], [...fromWhole.nodes.values()]);
  assert.deepEqual(fromSent.dataEdges, fromWhole.dataEdges);
  assert.deepEqual(fromSent.loopEdges, fromWhole.loopEdges);
  assert.deepEqual(fromSent.attempts, fromWhole.attempts);
  assert.deepEqual(fromSent.run, fromWhole.run);
  assert.equal(fromSent.nodes.get("__planning__#2").label, "__planning__");
});
