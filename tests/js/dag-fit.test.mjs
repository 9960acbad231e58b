// Unit tests of how a small run graph is made to fit its canvas: its gaps narrowed along the flow
// (static/js/dag/layout-tighten.js), the drawing a fit picks (scene-graph.js's graphFit), and the flow
// direction measured as drawn (layout-direction.js): `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { layoutFitting } from "../../static/js/dag/layout-direction.js";
import { TIGHTEST, alongMap, layoutTightened } from "../../static/js/dag/layout-tighten.js";
import { LEGIBLE_SCALE, wholeScale } from "../../static/js/dag/legibility.js";
import { graphFit } from "../../static/js/dag/scene-graph.js";
import { BOX, STEP, chainLayout, chainModel } from "./dag-chains.mjs";

const HEADER = new Set(["__planning__"]);

test("a coordinate along the flow keeps its row, or its share of a narrowed gap", () => {
  const moved = alongMap([{ lo: 50, hi: 86 }, { lo: 136, hi: 172 }], 0.5);
  assert.deepEqual([10, 50, 68, 86, 100, 136, 154, 172, 200].map(moved), [10, 50, 59, 68, 82, 118, 127, 136, 164]);
});

test("a drawing is narrowed by what it asks, evenly between rows; boxes and the planning row keep their size", () => {
  const layout = chainLayout(6);
  const tightened = layoutTightened(layout, { by: 50, header: HEADER });
  assert.equal(tightened.pos.get("n5").y, layout.pos.get("n5").y - 50);
  assert.equal(tightened.pos.get("n1").y - tightened.pos.get("n0").y, STEP - 10, "each of five gaps gave 10");
  assert.deepEqual(tightened.pos.get("__planning__"), layout.pos.get("__planning__"));
  assert.equal(tightened.pos.get("n3").h, BOX.h);
  assert.equal(tightened.bands[0].h, layout.bands[0].h - 50);
  assert.equal(tightened.bottom, layout.bottom - 50);
  assert.equal(layout.pos.get("n5").y, 82 + 5 * STEP, "the layout itself is unchanged");
});

test("a narrowed route still leaves its source's end and reaches its target's start", () => {
  const tightened = layoutTightened(chainLayout(6), { by: 50, header: HEADER });
  const [x0, y0, x1, y1] = tightened.routes.get("n2\u0000n3");
  assert.equal(x0, x1, "still straight down");
  assert.equal(y0, tightened.pos.get("n2").y + BOX.h);
  assert.equal(y1, tightened.pos.get("n3").y);
});

test("no gap is narrowed past the tightest, and nothing to narrow leaves the layout as it is", () => {
  const layout = chainLayout(6);
  const tightest = layoutTightened(layout, { by: Infinity, header: HEADER });
  assert.equal(tightest.pos.get("n1").y - tightest.pos.get("n0").y, BOX.h + (STEP - BOX.h) * TIGHTEST);
  assert.equal(layoutTightened(layout, { by: 0, header: HEADER }), layout);
  assert.equal(layoutTightened(chainLayout(1), { by: 50, header: HEADER }).pos.get("n0").y, 82);
});

test("a fit draws a graph as laid out when that is legible, narrowed when a little too long, else wrapped", () => {
  const canvas = { width: 1228, height: 561 };
  const asLaid = graphFit(chainModel(5), chainLayout(5), canvas);
  assert.equal(asLaid.step, 0);
  const narrowed = graphFit(chainModel(8), chainLayout(8), canvas);
  assert.equal(narrowed.step, 1);
  assert.ok(wholeScale(narrowed.scene.bounds, 1228, 561) >= LEGIBLE_SCALE);
  const n7 = narrowed.scene.boxes.find((box) => box.id === "n7");
  assert.ok(n7.y < chainLayout(8).pos.get("n7").y && n7.x === 12, "shorter, not wrapped");
  assert.equal(graphFit(chainModel(14), chainLayout(14), canvas).step, 2);
  assert.equal(graphFit(chainModel(60), chainLayout(60), { width: 390, height: 500 }).step, null);
});

/** Layouts that are only their direction, and what each measures as. */
function trial(fits) {
  const laid = [];
  return {
    laid,
    layoutOf: async (direction) => {
      laid.push(direction);
      return { direction };
    },
    fitOf: (layout) => fits[layout.direction],
  };
}

test("the first direction that fits as laid out is taken, and the other never laid out", async () => {
  const { laid, layoutOf, fitOf } = trial({ RIGHT: { scale: 0.9, step: 0 }, DOWN: { scale: 1, step: 0 } });
  const layout = await layoutFitting({ directions: ["RIGHT", null], layoutOf, fitOf });
  assert.equal(layout.direction, "RIGHT");
  assert.deepEqual(laid, ["RIGHT"]);
});

test("else both are laid out, and the one that fits with the fewest steps from ELK's drawing is taken", async () => {
  const { laid, layoutOf, fitOf } = trial({ DOWN: { scale: 0.86, step: 1 }, RIGHT: { scale: 0.95, step: 2 } });
  assert.equal((await layoutFitting({ directions: ["DOWN"], layoutOf, fitOf })).direction, "DOWN");
  assert.deepEqual(laid, ["DOWN", "RIGHT"]);
  const tie = trial({ DOWN: { scale: 0.86, step: 2 }, RIGHT: { scale: 0.95, step: 2 } });
  assert.equal((await layoutFitting({ directions: ["DOWN"], ...tie })).direction, "RIGHT", "the larger zoom");
});

test("when neither fits legibly, the one at the larger zoom is taken", async () => {
  const { layoutOf, fitOf } = trial({ DOWN: { scale: 0.4, step: null }, RIGHT: { scale: 0.2, step: null } });
  assert.equal((await layoutFitting({ directions: ["RIGHT"], layoutOf, fitOf })).direction, "DOWN");
  const one = trial({ DOWN: { scale: 0.9, step: null }, RIGHT: { scale: 0.7, step: 3 } });
  assert.equal((await layoutFitting({ directions: ["DOWN"], ...one })).direction, "RIGHT", "a legible one first");
});
