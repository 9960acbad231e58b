// Unit tests of the run graph's legibility (static/js/dag/legibility.js, title-cuts.js, and the direction a
// layout flows, layout.js with layout-sketch.js and layout-direction.js): `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import "./vocabulary.mjs";
import { layoutPlace, layoutPlan } from "../../static/js/dag/layout.js";
import { directionEstimated } from "../../static/js/dag/layout-direction.js";
import { planExtents } from "../../static/js/dag/layout-sketch.js";
import {
  LEGIBLE_PX, LEGIBLE_SCALE, TITLE_PX, chooseDirection, fitTransform, focusRect, labelPx,
} from "../../static/js/dag/legibility.js";
import { modelFromPayload } from "../../static/js/dag/model.js";
import { cutToFit, distinctCuts, distinguishingTail } from "../../static/js/dag/title-cuts.js";

/** A monospace stand-in for the canvas: 7 px a character. */
const measure = (text) => text.length * 7;

test("a name that fits is drawn whole; one too long is cut with an ellipsis to the room", () => {
  assert.equal(cutToFit("brd", 70, measure), "brd");
  const cut = cutToFit("validator_independent_benchmark", 140, measure);
  assert.ok(cut.endsWith("…") && measure(cut) <= 140, cut);
  assert.equal(cut, "validator_independe…");
});

test("two names cut to the same text keep the tail that tells them apart", () => {
  const names = ["review-backend-cascade-invalidation-a", "review-backend-cascade-invalidation-b", "brd"];
  const shown = distinctCuts(names, 140, measure);
  assert.equal(shown.get("brd"), "brd");
  const [a, b] = [shown.get(names[0]), shown.get(names[1])];
  assert.notEqual(a, b);
  assert.ok(a.endsWith("…-a") && b.endsWith("…-b"), `${a} / ${b}`);
  assert.ok(a.startsWith("review-backend-ca") && measure(a) <= 140);
});

test("a distinguishing tail widens to the last short word", () => {
  assert.equal(distinguishingTail("validator_test_dataset", ["validator_test_dataset", "validator_test_script"]), "_dataset");
  assert.equal(distinguishingTail("x-long-name-2", ["x-long-name-2", "x-long-name-3"]), "-2");
  assert.equal(distinguishingTail("abc", ["abc", "zabc"]), "", "a suffix of another has no tail of its own");
});

test("many names cut alike all read differently", () => {
  const names = Array.from({ length: 12 }, (_, i) => `implement-the-feature-flag-service-part-${i}`);
  const shown = distinctCuts(names, 150, measure);
  assert.equal(new Set(shown.values()).size, names.length);
});

test("a graph that fits legibly is shown whole and centred, never enlarged past 1:1", () => {
  const fit = fitTransform({ x: 0, y: 0, w: 400, h: 300 }, 1000, 600);
  assert.deepEqual(fit, { scale: 1, tx: 300, ty: 150, whole: true });
  const shrunk = fitTransform({ x: 0, y: 0, w: 1100, h: 600 }, 1000, 600);
  assert.ok(shrunk.whole && shrunk.scale >= LEGIBLE_SCALE && shrunk.scale < 1);
});

test("a graph too big to fit legibly opens at the legible zoom on its focus", () => {
  const bounds = { x: -40, y: -40, w: 4000, h: 3000 };
  const fit = fitTransform(bounds, 1000, 600, { focus: { x: 1000, y: 800, w: 184, h: 56 } });
  assert.equal(fit.whole, false);
  assert.equal(fit.scale, LEGIBLE_SCALE);
  assert.ok(labelPx(TITLE_PX, fit.scale) >= LEGIBLE_PX);
  // The focus is at the top-left corner, a margin in.
  assert.equal(Math.round(1000 * fit.scale + fit.tx), 16);
  assert.equal(Math.round(800 * fit.scale + fit.ty), 16);
  // A focus near the drawing's start shows the drawing from its start (its headings in view).
  const start = fitTransform(bounds, 1000, 600, { focus: { x: 0, y: 0, w: 184, h: 56 } });
  assert.equal(start.tx, 40 * start.scale);
  assert.equal(start.ty, 40 * start.scale);
  // Near the far end, the drawing's edge stays at the canvas's edge: no empty space past it.
  const end = fitTransform(bounds, 1000, 600, { focus: { x: 3900, y: 2900, w: 10, h: 10 } });
  assert.equal(Math.round((bounds.x + bounds.w) * end.scale + end.tx), 1000);
});

test("a fit focuses the running nodes, else the failed ones, else the first", () => {
  const boxes = [
    { x: 300, y: 0, w: 10, h: 10, status: "succeeded" },
    { x: 0, y: 0, w: 10, h: 10, status: "succeeded" },
    { x: 50, y: 200, w: 10, h: 10, status: "failed" },
  ];
  assert.deepEqual(focusRect(boxes), { x: 50, y: 200, w: 10, h: 10 });
  boxes.push({ x: 500, y: 500, w: 10, h: 10, status: "running" }, { x: 600, y: 520, w: 10, h: 10, status: "running" });
  assert.deepEqual(focusRect(boxes), { x: 500, y: 500, w: 110, h: 30 });
  assert.deepEqual(focusRect(boxes.slice(0, 2)), { x: 0, y: 0, w: 10, h: 10 });
});

test("a fit focuses work nodes, not the planning lane that heads the drawing", () => {
  const boxes = [
    { kind: "planning", x: 100, y: 0, w: 168, h: 34, status: "succeeded" },
    { kind: "planning", x: 300, y: 0, w: 168, h: 34, status: "running" },
    { kind: "node", x: 460, y: 180, w: 184, h: 56, status: "succeeded" },
    { kind: "node", x: 460, y: 300, w: 184, h: 56, status: "pending" },
  ];
  assert.deepEqual(focusRect(boxes), { x: 460, y: 180, w: 184, h: 56 });
  assert.deepEqual(focusRect(boxes.slice(0, 2)), { x: 300, y: 0, w: 168, h: 34 });
});

test("the direction is one legible before one that is not, then the one at the larger zoom", () => {
  assert.equal(chooseDirection({ DOWN: 0.5, RIGHT: 0.6 }), "RIGHT");
  assert.equal(chooseDirection({ DOWN: LEGIBLE_SCALE, RIGHT: 0.8 }), "DOWN", "0.8 is under the legible zoom");
  assert.equal(chooseDirection({ DOWN: 0.9, RIGHT: 1 }), "RIGHT");
  assert.equal(chooseDirection({ DOWN: 1, RIGHT: 1 }), "DOWN", "a tie flows down");
  assert.equal(chooseDirection({ DOWN: 0.9, RIGHT: 0.92 }), "DOWN", "within 5 % is a tie");
});

test("the estimated direction is the one whose rough extent fits the canvas at the larger zoom", () => {
  assert.equal(directionEstimated(chain(12), 1200, 600), "DOWN");
  // One node and the eight that need it: a wide row top-down, a short column left to right.
  const fan = modelFromPayload({
    run: { run_id: "run", manifest_version: 1 },
    nodes: Array.from({ length: 9 }, (_, i) => ({
      node_id: `n${i}`, kind: "generic", org_node: "coder", depends_on: i ? ["n0"] : [],
    })),
    edges: [],
    attempts: [],
  });
  assert.equal(directionEstimated(fan, 1200, 600), "RIGHT");
});

/** A chain of `length` nodes: a tall column top-down, a long row left to right. */
function chain(length) {
  const nodes = Array.from({ length }, (_, i) => ({
    node_id: `n${i}`, kind: "generic", org_node: "coder", depends_on: i ? [`n${i - 1}`] : [],
  }));
  return modelFromPayload({ run: { run_id: "run", manifest_version: 1 }, nodes, edges: [], attempts: [] });
}

test("a chain's extents: tall top-down, wide left to right", () => {
  const extents = planExtents(layoutPlan({ model: chain(8), previous: null }));
  assert.ok(extents.DOWN.h > extents.DOWN.w);
  assert.ok(extents.RIGHT.w > extents.RIGHT.h);
});

const lineClient = {
  // Lays a band out as ELK would a chain: one layer after another along the direction asked for.
  async layout(graph, options) {
    const right = options["elk.direction"] === "RIGHT";
    const xy = new Float64Array(graph.children.length * 2);
    graph.children.forEach((child, index) => {
      xy[index * 2] = right ? index * 236 : 0;
      xy[index * 2 + 1] = right ? 0 : index * 108;
    });
    const n = graph.children.length;
    return { width: right ? n * 236 : 184, height: right ? 56 : n * 108, xy, routes: graph.edges.map(() => []) };
  },
};

test("a layout flows the way it was asked, and an append keeps its direction", async () => {
  const placed = await layoutPlace({ plan: layoutPlan({ model: chain(4), previous: null, direction: "RIGHT" }), client: lineClient });
  assert.equal(placed.direction, "RIGHT");
  assert.ok(placed.pos.get("n3").x > placed.pos.get("n0").x);
  assert.equal(placed.pos.get("n3").y, placed.pos.get("n0").y);

  const grown = await layoutPlace({ plan: layoutPlan({ model: chain(6), previous: placed, direction: "DOWN" }), client: lineClient });
  assert.equal(grown.direction, "RIGHT");
  assert.deepEqual(grown.pos.get("n3"), placed.pos.get("n3"), "what was drawn did not move");
  assert.ok(grown.pos.get("n4").x > placed.pos.get("n3").x, "appended nodes go after, along the flow");
});
