// Unit tests of a long run graph wrapped to its canvas (static/js/dag/layout-wrap.js, scene-graph.js): its
// segments, its planning row, and the edges between segments: `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { WRAP_GAP, layoutWrapped, planningRow, wrapRoute } from "../../static/js/dag/layout-wrap.js";
import { LEGIBLE_SCALE, wholeScale } from "../../static/js/dag/legibility.js";
import { modelFromPayload } from "../../static/js/dag/model.js";
import { graphScene, graphSceneFitted } from "../../static/js/dag/scene-graph.js";
import { BOX, STEP, chainLayout as chainLayoutOf, chainModel } from "./dag-chains.mjs";

/** The wrap tests' chain, its band named as the page names a planner's band. */
const chainLayout = (length) => chainLayoutOf(length, { bandLabel: "coder · n nodes" });

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

/** A left-to-right chain of `length` work boxes beside a column of three planning boxes, as ELK lays it out. */
function rowLayout(length) {
  const pos = new Map(["__planning__", "__planning__:coder", "__planning__:validator"]
    .map((id, i) => [id, { x: 0, y: i * 42, w: 226, h: 30 }]));
  for (let i = 0; i < length; i++) pos.set(`n${i}`, { x: 278 + i * 262, y: 12, w: 226, h: 50 });
  const bands = [{ x: 266, y: 0, w: length * 262, h: 74, label: "" }];
  return { direction: "RIGHT", pos, routes: new Map(), bands, planningRight: 126, bottom: 266 + length * 262 };
}
const PLANNING = new Set(["__planning__", "__planning__:coder", "__planning__:validator"]);

test("wrapped left to right, the planning column becomes a row above, and segments start where it did", () => {
  const wrapped = layoutWrapped(rowLayout(8), { reach: 1411, header: PLANNING });
  assert.equal(wrapped.planningRow, true);
  const row = [...PLANNING].map((id) => [wrapped.pos.get(id).x, wrapped.pos.get(id).y]);
  assert.deepEqual(row, [[0, 0], [238, 0], [476, 0]]);
  assert.equal(wrapped.pos.get("n0").x, 12, "the first segment starts where the column did");
  assert.equal(wrapped.segments, 2, "five boxes a segment, where the column left room for four");
  assert.equal(wrapped.pos.get("n5").x, 12);
  assert.ok(wrapped.pos.get("n0").y >= 30 + 40, "the first segment is a band's gap below the planning row");
  assert.ok(wrapped.pos.get("n5").y >= wrapped.pos.get("n4").y + 50 + WRAP_GAP, "the second is below the first");
});

test("a left-to-right drawing within its reach still gets its planning row, so it may fit a shorter canvas", () => {
  const layout = rowLayout(4);
  const wrapped = layoutWrapped(layout, { reach: 1411, header: PLANNING });
  assert.notEqual(wrapped, layout);
  assert.equal(wrapped.segments, 1);
  assert.equal(wrapped.pos.get("n3").x + 226, 12 + 3 * 262 + 226);
});

test("a planning row longer than the reach goes on below", () => {
  const heads = ["a", "b", "c"].map((id, i) => [id, { x: 0, y: i * 42, w: 226, h: 30 }]);
  const { pos, column, end } = planningRow(heads, 500);
  assert.deepEqual([...pos.values()].map((rect) => [rect.x, rect.y]), [[0, 0], [238, 0], [0, 42]]);
  assert.equal(column, 226);
  assert.equal(end, 72);
});

test("an edge between two segments runs through the gap between them; one inside a segment has none", () => {
  const wrapped = layoutWrapped(chainLayout(12), { reach: 600, header: new Set(["__planning__"]) });
  const last = [...Array(12).keys()].findLast((i) => wrapped.segmentOf.get(`n${i}`) === 0);
  const [from, to] = [`n${last}`, `n${last + 1}`];
  const source = wrapped.pos.get(from);
  const target = wrapped.pos.get(to);
  const route = wrapRoute(wrapped, from, to);
  const gap = wrapped.gaps[0];
  assert.ok(source.x + source.w < gap && gap < target.x, "the gap lies between the two segments");
  assert.deepEqual(route.slice(0, 2), [source.x + source.w / 2, source.y + source.h], "out of the source's end");
  assert.deepEqual(route.slice(-2), [target.x + target.w / 2, target.y], "into the target's start");
  assert.ok(route.some((value, index) => index % 2 === 0 && value === gap), "along the gap");
  assert.equal(wrapRoute(wrapped, "n0", "n1"), null);
  assert.equal(wrapRoute(chainLayout(12), from, to), null, "an unwrapped layout has no segments");
});

test("a loop-back into an earlier segment leaves the side facing it and enters its target from that side", () => {
  const wrapped = layoutWrapped(chainLayout(12), { reach: 600, header: new Set(["__planning__"]) });
  const source = wrapped.pos.get("n11");
  const target = wrapped.pos.get("n1");
  const route = wrapRoute(wrapped, "n11", "n1", true);
  assert.deepEqual(route, [source.x, source.y + 25, wrapped.gaps[0], source.y + 25, wrapped.gaps[0], target.y + 25,
    target.x + target.w, target.y + 25]);
});

test("a loop-back inside a segment that another follows swings out no further than the gap", () => {
  const model = modelFromPayload({
    run: {},
    nodes: chainModel(12).order.map((id, i) => ({ node_id: id, kind: "generic", depends_on: i ? [`n${i - 1}`] : [] })),
    edges: [{ from: "n5", to: "n0", edge_type: "on_failure" }],
    attempts: [],
  });
  const wrapped = layoutWrapped(chainLayout(12), { reach: 600, header: new Set() });
  assert.equal(wrapped.segmentOf.get("n5"), 0);
  const scene = graphScene(model, wrapped);
  const arc = scene.links.find((link) => link.style === "on_failure");
  const xs = arc.d.match(/-?[\d.]+/g).map(Number).filter((_, index) => index % 2 === 0);
  assert.ok(Math.max(...xs) <= wrapped.gaps[0], arc.d);
});
