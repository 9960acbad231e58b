/**
 * The graph view's scene: nodes where the layout put them, data edges along ELK's routes (or as
 * curves along the flow between bands), and every `on_failure` edge as a dashed back arc that leaves
 * the failing node's side, swings out beside both nodes (right of a top-down drawing, below a
 * left-to-right one) and re-enters its target, so loop-backs read as control flow outside the data
 * flow. Every box shares the scene's titles, so cut names never read the same (labels.js).
 */
import { nodeTitle, titleSet } from "./labels.js";
import { layoutWrapped } from "./layout-wrap.js";
import { LEGIBLE_SCALE, SCENE_MARGIN, legibleReach, wholeScale } from "./legibility.js";
import { cubic, emptyBounds, finishBounds, include, roundedPolyline } from "./scene.js";
import { LINK, statusStyle } from "./theme.js";
import { statusWords } from "../status-vocabulary.js";

/** Runs with more work nodes than this are never wrapped: at a legible zoom they cannot fit anyway. */
export const WRAP_MAX = 80;

/**
 * The graph's scene for a `width` × `height` canvas: the layout as it is when it fits legibly or cannot
 * fit even wrapped, else wrapped to the canvas (layout-wrap.js), so it fits whole at a legible zoom.
 * @param {import("./model.js").Model} model
 * @param {import("./layout.js").Layout} layout
 * @param {{highlight?: Set<string>, width: number, height: number}} canvas
 * @returns {import("./scene.js").Scene}
 */
export function graphSceneFitted(model, layout, { highlight = new Set(), width, height }) {
  const scene = graphScene(model, layout, highlight);
  if (model.order.length > WRAP_MAX || wholeScale(scene.bounds, width, height) >= LEGIBLE_SCALE) return scene;
  const reach = legibleReach(layout.direction === "RIGHT" ? width : height);
  const wrapped = layoutWrapped(layout, { reach, header: new Set(model.planning) });
  if (wrapped === layout) return scene;
  const candidate = graphScene(model, wrapped, highlight);
  return wholeScale(candidate.bounds, width, height) >= LEGIBLE_SCALE ? candidate : scene;
}

/**
 * @param {import("./model.js").Model} model
 * @param {import("./layout.js").Layout} layout
 * @param {Set<string>} [highlight]  node ids to ring
 * @returns {import("./scene.js").Scene}
 */
export function graphScene(model, layout, highlight = new Set()) {
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
    texts.push(right ? { x: 0, y: -12, text: "Planning", role: "heading" } : { x: -12, y: 22, text: "Planning", role: "heading", align: "right" });
    // The heading is part of the drawing: a fit keeps it in view.
    if (right) include(bounds, 0, -28);
    else include(bounds, -76, 0);
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
  const route = layout.routes.get(`${edge.from}\u0000${edge.to}`);
  if (route && route.length >= 4) return { style, ...roundedPolyline(route) };
  if (right) {
    const sx = source.x + source.w;
    const sy = source.y + source.h / 2;
    const ex = target.x;
    const ey = target.y + target.h / 2;
    const bend = ex > sx ? Math.max(40, (ex - sx) / 2) : 40;
    const { d, arrow } = cubic(sx, sy, sx + bend, sy, ex - bend, ey, ex, ey);
    return { style, d, arrow };
  }
  const sx = source.x + source.w / 2;
  const sy = source.y + source.h;
  const ex = target.x + target.w / 2;
  const ey = target.y;
  // An edge to a wrapped drawing's next segment runs back against the flow: a short bend keeps it
  // from swinging far past the segment's end.
  const bend = ey > sy ? Math.max(40, (ey - sy) / 2) : 40;
  const { d, arrow } = cubic(sx, sy, sx, sy + bend, ex, ey - bend, ex, ey);
  return { style, d, arrow };
}

function loopLink(edge, layout, bounds, right) {
  const source = layout.pos.get(edge.from);
  const target = layout.pos.get(edge.to);
  if (!source || !target || edge.from === edge.to) return null;
  if (right) {
    const sx = source.x + source.w / 2;
    const sy = source.y + source.h;
    const ex = target.x + target.w / 2;
    const ey = target.y + target.h;
    const swing = Math.max(sy, ey) + 36 + Math.min(160, Math.abs(sx - ex) * 0.15);
    const path = cubic(sx, sy, sx, swing, ex, swing, ex, ey);
    include(bounds, Math.min(sx, ex), swing);
    return { style: "on_failure", d: path.d, arrow: path.arrow, edge, labelAt: path.mid };
  }
  const sx = source.x + source.w;
  const sy = source.y + source.h / 2;
  const ex = target.x + target.w;
  const ey = target.y + target.h / 2;
  // The swing grows with the vertical distance so long loop-backs do not hug the nodes between.
  const swing = Math.max(sx, ex) + 44 + Math.min(320, Math.abs(sy - ey) * 0.3);
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
