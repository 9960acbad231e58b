// Unit tests of the run graph's band plan and sketch (static/js/dag/layout.js): `node --test tests/js/`.
// ELK itself runs in a browser worker; here a stand-in client lays each band out as a grid.
import assert from "node:assert/strict";
import { test } from "node:test";

import { layoutPlace, layoutPlan, layoutSketch } from "../../static/js/dag/layout.js";
import { modelFromPayload } from "../../static/js/dag/model.js";

/**
 * A layered run: `layers` layers of `width` nodes, planner then coder, each node depending on one
 * or two nodes of the layer above (a fixed pattern, so every run of the tests sees the same graph).
 */
function layeredPayload({ layers, width }) {
  const nodes = [{ node_id: "__planning__", kind: "planning", org_node: "planner", depends_on: [] }];
  for (let layer = 0; layer < layers; layer++) {
    for (let slot = 0; slot < width; slot++) {
      const above = (offset) => `n${layer - 1}_${(slot + offset) % width}`;
      const dependsOn = layer === 0 ? [] : slot % 3 === 0 ? [above(0), above(5)] : [above(1)];
      const org = layer < layers / 2 ? "planner" : "coder";
      nodes.push({ node_id: `n${layer}_${slot}`, kind: "generic", org_node: org, depends_on: dependsOn });
    }
  }
  return { run: { run_id: "run", manifest_version: 1 }, nodes, edges: [], attempts: [] };
}

const gridClient = {
  async layout(graph) {
    const xy = new Float64Array(graph.children.length * 2);
    graph.children.forEach((_, index) => {
      xy[index * 2] = (index % 10) * 200;
      xy[index * 2 + 1] = Math.floor(index / 10) * 100;
    });
    return { width: 2000, height: 100 * Math.ceil(graph.children.length / 10), xy, routes: graph.edges.map(() => []) };
  },
};

test("a sketch places every node, in the bands ELK is given, with every data edge pointing down", async () => {
  const model = modelFromPayload(layeredPayload({ layers: 12, width: 40 }));
  const plan = layoutPlan({ model, previous: null });
  const sketch = layoutSketch({ plan });
  const placed = await layoutPlace({ plan, client: gridClient });

  assert.ok(plan.bands.length > 1);
  assert.deepEqual([...sketch.pos.keys()].sort(), [...placed.pos.keys()].sort());
  assert.deepEqual(sketch.bands.map((band) => band.label), placed.bands.map((band) => band.label));
  for (const edge of model.dataEdges) {
    assert.ok(sketch.pos.get(edge.to).y > sketch.pos.get(edge.from).y, `${edge.from} → ${edge.to}`);
  }
  assert.equal(sketch.routes.size, 0);
});

test("a sketch never puts two boxes on top of each other", () => {
  const sketch = layoutSketch({ plan: layoutPlan({ model: modelFromPayload(layeredPayload({ layers: 12, width: 40 })), previous: null }) });
  const rows = new Map();
  for (const rect of sketch.pos.values()) rows.set(rect.y, [...(rows.get(rect.y) || []), rect]);
  for (const row of rows.values()) {
    row.sort((a, b) => a.x - b.x);
    for (let i = 1; i < row.length; i++) assert.ok(row[i].x >= row[i - 1].x + row[i - 1].w);
  }
});

test("the same run is always sketched the same way", () => {
  const sketchOf = () => layoutSketch({ plan: layoutPlan({ model: modelFromPayload(layeredPayload({ layers: 8, width: 30 })), previous: null }) });
  assert.deepEqual([...sketchOf().pos], [...sketchOf().pos]);
});

test("a graph of one band and an append are not sketched", async () => {
  const small = modelFromPayload(layeredPayload({ layers: 4, width: 10 }));
  assert.equal(layoutSketch({ plan: layoutPlan({ model: small, previous: null }) }), null);

  const before = modelFromPayload(layeredPayload({ layers: 6, width: 40 }));
  const previous = await layoutPlace({ plan: layoutPlan({ model: before, previous: null }), client: gridClient });
  const after = modelFromPayload(layeredPayload({ layers: 12, width: 40 }));
  assert.equal(layoutSketch({ plan: layoutPlan({ model: after, previous }) }), null);
});
