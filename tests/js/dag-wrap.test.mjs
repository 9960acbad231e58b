// Unit tests of a long run graph wrapped to its canvas (static/js/dag/layout-wrap.js, scene-graph.js) and of
// the flow direction chosen by what fits legibly (legibility.js): `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { layoutWrapped } from "../../static/js/dag/layout-wrap.js";
import { LEGIBLE_SCALE, chooseDirection, legibleReach, wholeScale } from "../../static/js/dag/legibility.js";
import { modelFromPayload } from "../../static/js/dag/model.js";
import { graphSceneFitted } from "../../static/js/dag/scene-graph.js";

const BOX = { w: 226, h: 50 };
const STEP = 86;

/** A top-down chain of `length` work boxes under one planning box, as ELK lays a band of it out. */
function chainLayout(length) {
  const pos = new Map([["__planning__", { x: 0, y: 0, w: 226, h: 30 }]]);
  const routes = new Map();
  for (let i = 0; i < length; i++) {
    pos.set(`n${i}`, { x: 12, y: 82 + i * STEP, ...BOX });
    if (i) routes.set(`n${i - 1}\u0000n${i}`, [125, 82 + (i - 1) * STEP + 50, 125, 82 + i * STEP]);
  }
  const bands = [{ x: 0, y: 70, w: 250, h: length * STEP, label: "coder · n nodes" }];
  return { direction: "DOWN", pos, routes, bands, planningRight: 238, bottom: 70 + length * STEP };
}

function chainModel(length) {
  const nodes = [{ node_id: "__planning__", kind: "planning", depends_on: [] }];
  for (let i = 0; i < length; i++) nodes.push({ node_id: `n${i}`, kind: "generic", depends_on: i ? [`n${i - 1}`] : [] });
  return modelFromPayload({ run: {}, nodes, edges: [], attempts: [] });
}

test("a chain longer than the reach wraps into segments side by side, each starting where the first does", () => {
  const layout = chainLayout(12);
  const wrapped = layoutWrapped(layout, { reach: 600, header: new Set(["__planning__"]) });
  assert.equal(wrapped.segments, 2);
  assert.deepEqual(wrapped.pos.get("__planning__"), layout.pos.get("__planning__"), "the planning row stays");
  for (const [id, rect] of wrapped.pos) assert.ok(rect.y + rect.h <= 600, `${id} ends past the reach`);
  const first = wrapped.pos.get("n0");
  const [next] = [...wrapped.pos.values()].filter((rect) => rect.x > first.x + first.w);
  assert.equal(next.y, first.y, "the second segment starts level with the first");
  assert.deepEqual(layout.pos.get("n11"), { x: 12, y: 82 + 11 * STEP, ...BOX }, "the layout itself is unchanged");
});

test("a wrapped edge keeps its route inside a segment and loses it across two", () => {
  const wrapped = layoutWrapped(chainLayout(12), { reach: 600, header: new Set(["__planning__"]) });
  const segmentOf = (id) => (wrapped.pos.get(id).x > 100 ? 1 : 0);
  const crossing = [...Array(11).keys()].find((i) => segmentOf(`n${i}`) !== segmentOf(`n${i + 1}`));
  assert.ok(!wrapped.routes.has(`n${crossing}\u0000n${crossing + 1}`));
  const inside = wrapped.routes.get(`n${crossing + 1}\u0000n${crossing + 2}`);
  assert.equal(inside[1], wrapped.pos.get(`n${crossing + 1}`).y + 50, "the route moved with its boxes");
  assert.deepEqual(wrapped.bands.map((band) => Boolean(band.continued)), [false, true], "the band is cut, labelled once");
});

test("a drawing within its reach is not wrapped", () => {
  const layout = chainLayout(3);
  assert.equal(layoutWrapped(layout, { reach: 600, header: new Set(["__planning__"]) }), layout);
});

test("a graph too long to fit legibly is drawn wrapped when that fits it whole at a legible zoom", () => {
  const scene = graphSceneFitted(chainModel(14), chainLayout(14), { width: 1228, height: 561 });
  assert.ok(wholeScale(scene.bounds, 1228, 561) >= LEGIBLE_SCALE, JSON.stringify(scene.bounds));
  assert.equal(scene.boxes.length, 15);
});

test("a graph that cannot fit legibly even wrapped is drawn as laid out, for the minimap", () => {
  const layout = chainLayout(60);
  const scene = graphSceneFitted(chainModel(60), layout, { width: 390, height: 500 });
  assert.deepEqual(scene.boxes.find((box) => box.id === "n59").y, layout.pos.get("n59").y);
});

test("the direction is one that fits legibly once wrapped, before one that fits at neither", () => {
  // A long chain: top-down it wraps into a few columns side by side; left to right it is one long row
  // that would wrap into more rows than the canvas is tall.
  const chain = { DOWN: { w: 300, h: 2400 }, RIGHT: { w: 5200, h: 120 } };
  assert.ok(legibleReach(561) > 600);
  assert.equal(chooseDirection(chain, 1228, 561), "DOWN");
  const row = { DOWN: { w: 6000, h: 200 }, RIGHT: { w: 800, h: 1500 } };
  assert.equal(chooseDirection(row, 1228, 561), "RIGHT");
});
