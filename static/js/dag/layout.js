/**
 * Placement of a run's nodes: ELK layered, one "band" at a time, stacked along the flow: top to
 * bottom when the graph flows down, left to right when it flows right (the run graph picks the
 * direction that fits its canvas, layout-sketch.js's planExtents; an append keeps the drawing's).
 *
 * Why bands: ELK's layered pipeline grows much faster than linearly (1,000 nodes take seconds even
 * with tuned options), while a band of at most BAND_MAX nodes takes a tenth of a second once the
 * worker is warm. A band is a contiguous run of
 * one org node's nodes in manifest order (a stage: planner, then coder, then validator appends),
 * cut into layer ranges when it is larger than BAND_MAX. A graph small enough for one band is laid
 * out in one pass for the best drawing.
 *
 * Why stacking: appends never move what is drawn. `layoutPlace` with a `previous` layout keeps
 * every existing position and places only the new nodes, as new bands below the bottom (their
 * dependencies are all above them, so edges still point down); new planning calls extend the
 * planning row to the right. The same function places a cold load, so it is deterministic: the
 * same manifest in the same order always yields the same drawing.
 *
 * Why a sketch: ELK starts cold in every new worker (script compile, class initialisation, then
 * its code runs unoptimised until V8 has compiled it), so a page's first layout of 1,000 nodes
 * takes over a second on a 2-core machine, two to three times what the same layout takes once the
 * worker is warm, and no option we tried changed that much. `layoutSketch` places the same bands
 * in tens of milliseconds on the main thread (layers, a barycenter order, no edge routes), so a
 * large run is on screen at once; ELK's layout replaces it when it arrives, and only ELK's layout
 * is cached.
 */
import {
  BAND_GAP, LAYER_GAP, NODE_GAP, PADDING, PLANNING_GAP, longestPathLayers, sketchBand,
} from "./layout-sketch.js";
import { SIZE } from "./theme.js";

/** Largest band handed to ELK in one piece; tuned on a 2-core machine (see tests/bench). */
const BAND_MAX = 120;
/** Above this band size ELK gets the fast options; below it, the library's quality defaults. */
const SMALL_BAND = 60;

const BASE_OPTIONS = {
  "elk.algorithm": "layered",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.padding": `[top=${PADDING},left=${PADDING},bottom=${PADDING},right=${PADDING}]`,
  "elk.spacing.nodeNode": String(NODE_GAP),
  "elk.spacing.edgeEdge": "8",
  "elk.spacing.edgeNode": "12",
  "elk.layered.spacing.nodeNodeBetweenLayers": String(LAYER_GAP),
  "elk.layered.spacing.edgeNodeBetweenLayers": "14",
  "elk.layered.spacing.edgeEdgeBetweenLayers": "6",
  // A band cut from a bigger graph falls apart into many small components; packing them one under
  // another costs time and breaks the layer rows. Laid out together, a layer stays one row.
  "elk.separateConnectedComponents": "false",
  // Our boxes have fixed sizes and give ELK no labels or ports, so its per-node "micro layout"
  // (label placement, node sizing) has nothing to do; skipping it leaves every position the same.
  "elk.omitNodeMicroLayout": "true",
};
/**
 * Measured on a random 1,000-node layered DAG: longest-path layering, one sweep of crossing
 * minimisation and no greedy switch cut ELK's time about 3x against its defaults, with orthogonal
 * routing still readable. Node placement stays Brandes-Koepf: SIMPLE is faster but zig-zags.
 */
const FAST_OPTIONS = {
  "elk.layered.layering.strategy": "LONGEST_PATH",
  "elk.layered.thoroughness": "1",
  "elk.layered.crossingMinimization.greedySwitch.type": "OFF",
};

/**
 * @typedef {import("./layout-client.js").ElkResult} ElkResult
 * @typedef {{x: number, y: number, w: number, h: number}} Rect
 * @typedef {{x: number, y: number, w: number, h: number, label: string}} Band
 * @typedef {{ids: string[], label: string, edges: import("./model.js").GraphEdge[], edgeKeys: string[]}} BandPlan
 *   a band's nodes (layer by layer) and the data edges inside it, before placement
 * @typedef {object} LayoutPlan
 * @property {Layout | null} previous  positions to keep
 * @property {string[]} planning  planning nodes to add to the planning row
 * @property {BandPlan[]} bands  the work nodes to place, band by band, top to bottom
 * @property {Map<string, string[]>} preds  data-edge sources per target
 * @property {import("./layout-sketch.js").Direction} direction  the flow: `previous`'s when there is one
 * @typedef {object} Layout
 * @property {import("./layout-sketch.js").Direction} direction  ELK's, and the way bands are stacked
 * @property {Map<string, Rect>} pos       every placed node's box (top-left, world units)
 * @property {Map<string, number[]>} routes ELK's orthogonal route per in-band data edge, keyed from\0to
 * @property {Band[]} bands
 * @property {number} planningRight  where the next planning box goes: x in a row (DOWN), y in a column (RIGHT)
 * @property {number} bottom         where the last band ends along the flow: y (DOWN), x (RIGHT)
 */

/** @returns {Layout} */
function emptyLayout(direction) {
  const bottom = direction === "RIGHT" ? SIZE.planning.w : SIZE.planning.h;
  return { direction, pos: new Map(), routes: new Map(), bands: [], planningRight: 0, bottom };
}

/** @param {Layout} layout @returns {Layout} a copy that placing more nodes cannot disturb */
function cloneLayout(layout) {
  return {
    direction: layout.direction,
    pos: new Map(layout.pos),
    routes: new Map(layout.routes),
    bands: layout.bands.slice(),
    planningRight: layout.planningRight,
    bottom: layout.bottom,
  };
}

/**
 * Cuts the nodes of `model` that `previous` has not placed into bands: the shared first step of
 * `layoutPlace` and `layoutSketch`, so a cold load computes it once for both.
 * @param {object} args
 * @param {import("./model.js").Model} args.model
 * @param {Layout | null} args.previous  positions to keep (an earlier manifest version), or null
 * @param {import("./layout-sketch.js").Direction} [args.direction]  the flow of a cold layout
 * @returns {LayoutPlan}
 */
export function layoutPlan({ model, previous, direction = "DOWN" }) {
  const kept = (id) => Boolean(previous && previous.pos.has(id));
  const fresh = model.order.filter((id) => !kept(id));
  const preds = predecessors(model.dataEdges);
  const groups = !previous && fresh.length <= BAND_MAX ? [{ org: "", ids: fresh }] : layoutStages(fresh, model);
  const bands = groups.flatMap((group) => splitIntoBands(group, preds));
  const bandOf = new Map();
  bands.forEach((band, index) => {
    band.edges = [];
    for (const id of band.ids) bandOf.set(id, index);
  });
  for (const edge of model.dataEdges) {
    const index = bandOf.get(edge.from);
    if (index !== undefined && index === bandOf.get(edge.to)) bands[index].edges.push(edge);
  }
  for (const band of bands) band.edgeKeys = band.edges.map((edge) => `${edge.from}\u0000${edge.to}`);
  return {
    previous, planning: model.planning.filter((id) => !kept(id)), bands, preds,
    direction: previous ? previous.direction : direction,
  };
}

/**
 * Places every node the plan cuts into bands, with ELK in the layout worker. The bands are handed
 * to the worker before this returns, so the caller can do other work (draw a sketch) meanwhile.
 * @param {object} args
 * @param {LayoutPlan} args.plan
 * @param {{layout: Function}} args.client  the layout worker (layout-client.js)
 * @returns {Promise<Layout>}
 */
export async function layoutPlace({ plan, client }) {
  const pending = Promise.all(plan.bands.map((band) => layoutBand(band, client, plan.direction)));
  const layout = startLayout(plan);
  const results = await pending;
  plan.bands.forEach((band, index) => stackBand(layout, band, results[index], plan.preds));
  return layout;
}

/**
 * A provisional placement of a cold load, for the first paint while ELK works: the plan's bands,
 * each laid out by `sketchBand`. Synchronous, and tens of milliseconds for thousands of nodes.
 * @param {object} args
 * @param {LayoutPlan} args.plan
 * @returns {Layout | null} null when there is nothing to sketch: an append (what is drawn must not
 *   move), or a graph that fits one band (small enough to read at a glance, so drawn once, by ELK,
 *   rather than drawn and then moved)
 */
export function layoutSketch({ plan }) {
  if (plan.previous || plan.bands.length < 2) return null;
  const layout = startLayout(plan);
  // Stacked without the predecessors, so each band is centred under the one above: shifted under
  // their dependencies as ELK's bands are, the sketch's bands drifted sideways (at 3,000 nodes to
  // twice the width of ELK's drawing, so it was fitted at half the size).
  for (const band of plan.bands) stackBand(layout, band, sketchBand(band, plan.preds, plan.direction), new Map());
  return layout;
}

/** @param {LayoutPlan} plan @returns {Layout} the positions to keep plus the planning row */
function startLayout(plan) {
  const layout = plan.previous ? cloneLayout(plan.previous) : emptyLayout(plan.direction);
  // A row above the bands of a top-down drawing, a column left of those of a left-to-right one.
  const right = layout.direction === "RIGHT";
  for (const id of plan.planning) {
    const at = layout.planningRight;
    layout.pos.set(id, { x: right ? 0 : at, y: right ? at : 0, ...sizeOf("planning") });
    layout.planningRight += (right ? SIZE.planning.h : SIZE.planning.w) + PLANNING_GAP;
  }
  return layout;
}

function sizeOf(kind) {
  return { w: SIZE[kind].w, h: SIZE[kind].h };
}

/** @returns {Map<string, string[]>} data-edge sources per target */
function predecessors(dataEdges) {
  const preds = new Map();
  for (const edge of dataEdges) {
    if (!preds.has(edge.to)) preds.set(edge.to, []);
    preds.get(edge.to).push(edge.from);
  }
  return preds;
}

/**
 * Contiguous runs of one org node in manifest order: the stages appends create.
 * @returns {{org: string, ids: string[]}[]}
 */
export function layoutStages(ids, model) {
  const groups = [];
  for (const id of ids) {
    const org = model.nodes.get(id).org_node || "";
    const last = groups[groups.length - 1];
    if (last && last.org === org) last.ids.push(id);
    else groups.push({ org, ids: [id] });
  }
  return groups;
}

/**
 * Cuts a stage into bands of at most BAND_MAX nodes along its longest-path layers, so each band
 * holds whole layers (edges inside a band are routed by ELK; edges between bands run downwards).
 * @returns {{ids: string[], label: string}[]}
 */
function splitIntoBands(group, preds) {
  const layerOf = longestPathLayers(group.ids, preds);
  const index = new Map(group.ids.map((id, position) => [id, position]));
  const sorted = group.ids.slice().sort((a, b) => layerOf.get(a) - layerOf.get(b) || index.get(a) - index.get(b));
  const chunks = [];
  for (const id of sorted) {
    const last = chunks[chunks.length - 1];
    if (!last || last.length >= BAND_MAX) chunks.push([id]);
    else last.push(id);
  }
  return chunks.map((ids, position) => ({ ids, label: bandLabel(group.org, ids.length, position, chunks.length) }));
}

function bandLabel(org, count, position, total) {
  if (!org) return "";
  const part = total > 1 ? ` · part ${position + 1} of ${total}` : "";
  return `${org}${part} · ${count} node${count === 1 ? "" : "s"}`;
}

function layoutBand(band, client, direction) {
  const graph = {
    id: "band",
    children: band.ids.map((id) => ({ id, width: SIZE.node.w, height: SIZE.node.h })),
    edges: band.edges.map((edge, index) => ({ id: `e${index}`, sources: [edge.from], targets: [edge.to] })),
  };
  const base = { ...BASE_OPTIONS, "elk.direction": direction };
  const options = band.ids.length > SMALL_BAND ? { ...base, ...FAST_OPTIONS } : base;
  return client.layout(graph, options);
}

/**
 * Puts a laid-out band after everything placed so far, along the flow. Across it, it is shifted so
 * its nodes sit, on average, in line with their dependencies in earlier bands; a band with none is
 * centred on the previous band.
 */
function stackBand(layout, band, result, preds) {
  const { xy, routes, width, height } = result;
  const right = layout.direction === "RIGHT";
  // Index into an [x, y] pair of the across axis, and the across extents of a box and of the band.
  const a = right ? 1 : 0;
  const acrossOf = (rect) => (right ? rect.y : rect.x);
  const breadth = right ? height : width;
  let shift = 0;
  let pairs = 0;
  band.ids.forEach((id, index) => {
    for (const pred of preds.get(id) || []) {
      const source = layout.pos.get(pred);
      if (!source) continue;
      shift += acrossOf(source) - xy[index * 2 + a];
      pairs += 1;
    }
  });
  const previous = layout.bands[layout.bands.length - 1];
  let across = 0;
  if (pairs) across = Math.round(shift / pairs);
  else if (previous) across = Math.round(acrossOf(previous) + (right ? previous.h : previous.w) / 2 - breadth / 2);
  const along = layout.bottom + BAND_GAP;
  const offsetX = right ? along : across;
  const offsetY = right ? across : along;
  band.ids.forEach((id, index) => {
    layout.pos.set(id, { x: xy[index * 2] + offsetX, y: xy[index * 2 + 1] + offsetY, ...sizeOf("node") });
  });
  band.edgeKeys.forEach((key, index) => {
    const points = routes[index];
    if (points.length) layout.routes.set(key, points.map((value, i) => value + (i % 2 ? offsetY : offsetX)));
  });
  layout.bands.push({ x: offsetX, y: offsetY, w: width, h: height, label: band.label });
  layout.bottom = along + (right ? width : height);
}

/** @param {Layout} layout @returns {object} plain JSON for the cache */
export function layoutToJSON(layout) {
  return {
    direction: layout.direction,
    pos: [...layout.pos].map(([id, rect]) => [id, rect.x, rect.y, rect.w, rect.h]),
    // [from, to, points]: the in-memory key joins the two ids with a NUL, which a JSON column of
    // PostgreSQL (where the server keeps layouts) cannot hold.
    routes: [...layout.routes].map(([key, points]) => [...key.split("\u0000"), points]),
    bands: layout.bands,
    planningRight: layout.planningRight,
    bottom: layout.bottom,
  };
}

/** @returns {Layout} */
export function layoutFromJSON(json) {
  return {
    // Layouts from before the direction was chosen all flowed down.
    direction: json.direction === "RIGHT" ? "RIGHT" : "DOWN",
    pos: new Map(json.pos.map(([id, x, y, w, h]) => [id, { x, y, w, h }])),
    routes: new Map(json.routes.map(([from, to, points]) => [`${from}\u0000${to}`, points])),
    bands: json.bands,
    planningRight: json.planningRight,
    bottom: json.bottom,
  };
}
