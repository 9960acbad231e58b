/**
 * The graph view's scene: nodes where the layout put them, data edges along ELK's routes (or as
 * curves along the flow between bands), and every `on_failure` edge as a dashed back arc that leaves
 * the failing node's side, swings out beside both nodes (right of a top-down drawing, below a
 * left-to-right one) and re-enters its target, so loop-backs read as control flow outside the data
 * flow. In a drawing wrapped to its canvas, an edge of either kind between two segments runs through
 * the gap between them (layout-wrap.js). Every box shares the scene's titles, so cut names never read
 * the same (labels.js).
 */
import { nodeTitle, titleSet } from "./labels.js";
import { layoutTightened } from "./layout-tighten.js";
import { layoutWrapped, wrapRoute } from "./layout-wrap.js";
import { LEGIBLE_SCALE, SCENE_MARGIN, legibleReach, wholeScale } from "./legibility.js";
import { cubic, emptyBounds, finishBounds, include, roundedPolyline } from "./scene.js";
import { LINK, statusStyle } from "./theme.js";
import { statusWords } from "../status-vocabulary.js";

/** Runs with more work nodes than this are never narrowed or wrapped: at a legible zoom they cannot fit anyway. */
export const WRAP_MAX = 80;
/** World units a narrowed drawing is made shorter than it must be (graphFit). */
const TIGHTEN_SPARE = 8;

/**
 * The graph's scene for a `width` × `height` canvas (graphFit's).
 * @param {import("./model.js").Model} model
 * @param {import("./layout.js").Layout} layout
 * @param {{highlight?: Set<string>, width: number, height: number}} canvas
 * @returns {import("./scene.js").Scene}
 */
export function graphSceneFitted(model, layout, canvas) {
  return graphFit(model, layout, canvas).scene;
}

/**
 * How the graph is drawn for a `width` × `height` canvas: the first of these drawings that fits the
 * canvas at a legible zoom, else the layout as it is (for the minimap). In order, each a further step
 * from ELK's drawing: 0, the layout as it is; 1, its gaps along the flow narrowed as far as it needs
 * (layout-tighten.js); 2, wrapped to the canvas (layout-wrap.js); 3, wrapped once its gaps are
 * narrowed as far as they go (fewer segments). Each is tried with the planning heading beside a row
 * of planning calls and above it (a drawing a little too wide one way may fit the other), and drawn
 * the way that fits at the larger zoom.
 * @param {import("./model.js").Model} model
 * @param {import("./layout.js").Layout} layout
 * @param {{highlight?: Set<string>, width: number, height: number}} canvas
 * @returns {{scene: import("./scene.js").Scene, step: number | null}}  `step`: the drawing's, or null
 *   when none fits legibly
 */
export function graphFit(model, layout, { highlight = new Set(), width, height }) {
  const scaleOf = (candidate) => wholeScale(candidate.bounds, width, height);
  const scene = graphScene(model, layout, highlight);
  if (scaleOf(scene) >= LEGIBLE_SCALE) return { scene, step: 0 };
  if (model.order.length > WRAP_MAX) return { scene, step: null };
  const header = new Set(model.planning);
  const right = layout.direction === "RIGHT";
  const reach = legibleReach(right ? width : height);
  const headings = model.planning.length ? [false, true] : [false];
  const drawnAs = (drawn, above) => graphScene(model, drawn, highlight, { headingAbove: above });
  const asLaid = new Map(headings.map((above) => [above, above ? drawnAs(layout, above) : scene]));
  // How much longer along the flow than a legible zoom shows the drawing is, with the heading so placed,
  // and a little more: narrowed to the exact length, it would be legible only to within rounding.
  const over = (above) => (right ? asLaid.get(above).bounds.w : asLaid.get(above).bounds.h)
    - (right ? width : height) / LEGIBLE_SCALE + TIGHTEN_SPARE;
  const drawings = [
    () => layout,
    (above) => layoutTightened(layout, { by: over(above), header }),
    () => layoutWrapped(layout, { reach, header }),
    () => layoutWrapped(layoutTightened(layout, { by: Infinity, header }), { reach, header }),
  ];
  for (const [step, drawing] of drawings.entries()) {
    let best = null;
    for (const above of headings) {
      const drawn = drawing(above);
      // A later drawing that changed nothing was measured as the first; a heading above a column is
      // where it always is.
      if ((step && drawn === layout) || (above && !planningInRow(drawn))) continue;
      const candidate = drawn === layout ? asLaid.get(above) : drawnAs(drawn, above);
      if (scaleOf(candidate) >= LEGIBLE_SCALE && (!best || scaleOf(candidate) > scaleOf(best))) best = candidate;
    }
    if (best) return { scene: best, step };
  }
  return { scene, step: null };
}

/** Whether `layout`'s planning calls are in a row: a top-down drawing's, or one a wrap moved there. */
function planningInRow(layout) {
  return layout.direction !== "RIGHT" || Boolean(layout.planningRow);
}

/**
 * @param {import("./model.js").Model} model
 * @param {import("./layout.js").Layout} layout
 * @param {Set<string>} [highlight]  node ids to ring
 * @param {{headingAbove?: boolean}} [options]  the planning heading above a row of planning calls, not
 *   beside it (a column always has it above)
 * @returns {import("./scene.js").Scene}
 */
export function graphScene(model, layout, highlight = new Set(), { headingAbove = false } = {}) {
  const bounds = emptyBounds();
  const boxes = [];
  const right = layout.direction === "RIGHT";
  const titles = titleSet([...layout.pos.keys()].filter((id) => model.nodes.has(id)).map((id) => nodeTitle(model.nodes.get(id))));
  for (const [id, rect] of layout.pos) {
    const node = model.nodes.get(id);
    if (!node) continue;
    boxes.push({
      id, kind: node.kind === "planning" ? "planning" : "node", ...rect, node, highlight: highlight.has(id), titles,
      attempts: model.attemptsByExec,
    });
    include(bounds, rect.x, rect.y, rect.w, rect.h);
  }
  const texts = [];
  if (model.planning.length) {
    // The heading is part of the drawing: a fit keeps it in view. Beside a row it costs no height.
    if (planningInRow(layout) && !headingAbove) {
      texts.push({ x: -12, y: 22, text: "Planning", role: "heading", align: "right" });
      include(bounds, -76, 0);
    } else {
      texts.push({ x: 0, y: -12, text: "Planning", role: "heading" });
      include(bounds, 0, -28);
    }
  }
  const bands = layout.bands.filter((band) => band.label);
  for (const band of bands) {
    if (!band.continued) texts.push({ x: band.x + 10, y: band.y - 8, text: band.label, role: "band" });
    include(bounds, band.x, band.y - 24, band.w, band.h + 24);
  }
  const links = [];
  for (const edge of model.dataEdges) {
    const link = dataLink(edge, layout, right);
    if (link) links.push(link);
  }
  for (const edge of model.loopEdges) {
    const link = loopLink(edge, layout, bounds, right);
    if (link) links.push(link);
  }
  return { bounds: finishBounds(bounds, SCENE_MARGIN), bands, links, boxes, texts };
}

function dataLink(edge, layout, right) {
  const source = layout.pos.get(edge.from);
  const target = layout.pos.get(edge.to);
  if (!source || !target) return null;
  const style = LINK[edge.edge_type] ? edge.edge_type : "zero_token";
  const route = layout.routes.get(`${edge.from}\u0000${edge.to}`) || wrapRoute(layout, edge.from, edge.to);
  if (route && route.length >= 4) return { style, ...roundedPolyline(route) };
  if (right) {
    const sx = source.x + source.w;
    const sy = source.y + source.h / 2;
    const ex = target.x;
    const ey = target.y + target.h / 2;
    const bend = Math.max(40, (ex - sx) / 2);
    const { d, arrow } = cubic(sx, sy, sx + bend, sy, ex - bend, ey, ex, ey);
    return { style, d, arrow };
  }
  const sx = source.x + source.w / 2;
  const sy = source.y + source.h;
  const ex = target.x + target.w / 2;
  const ey = target.y;
  const bend = Math.max(40, (ey - sy) / 2);
  const { d, arrow } = cubic(sx, sy, sx, sy + bend, ex, ey - bend, ex, ey);
  return { style, d, arrow };
}

function loopLink(edge, layout, bounds, right) {
  const source = layout.pos.get(edge.from);
  const target = layout.pos.get(edge.to);
  if (!source || !target || edge.from === edge.to) return null;
  const wrapped = wrapRoute(layout, edge.from, edge.to, true);
  if (wrapped) {
    // Labelled halfway along the gap it runs through.
    const labelAt = [(wrapped[2] + wrapped[4]) / 2, (wrapped[3] + wrapped[5]) / 2];
    return { style: "on_failure", ...roundedPolyline(wrapped), edge, labelAt };
  }
  // In a segment of a wrapped drawing that another follows, the arc swings out no further than the
  // gap between them, clear of the next segment.
  const room = layout.gaps ? layout.gaps[layout.segmentOf.get(edge.from)] : undefined;
  const within = (swing) => (room === undefined ? swing : Math.min(swing, room));
  if (right) {
    const sx = source.x + source.w / 2;
    const sy = source.y + source.h;
    const ex = target.x + target.w / 2;
    const ey = target.y + target.h;
    const swing = within(Math.max(sy, ey) + 36 + Math.min(160, Math.abs(sx - ex) * 0.15));
    const path = cubic(sx, sy, sx, swing, ex, swing, ex, ey);
    include(bounds, Math.min(sx, ex), swing);
    return { style: "on_failure", d: path.d, arrow: path.arrow, edge, labelAt: path.mid };
  }
  const sx = source.x + source.w;
  const sy = source.y + source.h / 2;
  const ex = target.x + target.w;
  const ey = target.y + target.h / 2;
  // The swing grows with the vertical distance so long loop-backs do not hug the nodes between.
  const swing = within(Math.max(sx, ex) + 44 + Math.min(320, Math.abs(sy - ey) * 0.3));
  const path = cubic(sx, sy, swing, sy, swing, ey, ex, ey);
  include(bounds, swing, Math.min(sy, ey));
  return { style: "on_failure", d: path.d, arrow: path.arrow, edge, labelAt: path.mid };
}

const GROUP = { w: 340, h: 84, gap: 56 };

/**
 * The collapsed view of a run too large to draw whole: one box per stage with its status counts,
 * stacked in manifest order. Clicking a stage draws that stage alone.
 * @param {import("./model.js").Model} model
 * @param {{org: string, ids: string[]}[]} stages
 * @returns {import("./scene.js").Scene}
 */
export function collapsedScene(model, stages) {
  const boxes = stages.map((stage, index) => ({
    id: `stage:${index}`,
    kind: "group",
    x: 0,
    y: index * (GROUP.h + GROUP.gap),
    w: GROUP.w,
    h: GROUP.h,
    stage: index,
    title: `${stage.org || "nodes"} · ${stage.ids.length.toLocaleString("en")} nodes`,
    summary: statusSummary(model, stage.ids),
  }));
  const links = boxes.slice(1).map((box) => {
    const x = GROUP.w / 2;
    return { style: "zero_token", d: `M${x},${box.y - GROUP.gap}L${x},${box.y}`, arrow: [x, box.y, Math.PI / 2] };
  });
  const bounds = emptyBounds();
  include(bounds, 0, 0, GROUP.w, boxes.length * (GROUP.h + GROUP.gap));
  return { bounds: finishBounds(bounds, 40), bands: [], links, boxes, texts: [] };
}

function statusSummary(model, ids) {
  const counts = new Map();
  for (const id of ids) {
    const status = model.nodes.get(id).status;
    counts.set(status, (counts.get(status) || 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([status, count]) => `${statusStyle(status).glyph} ${count.toLocaleString("en")} ${statusWords(status)}`)
    .join(" · ");
}
