/**
 * Placement of a run's nodes: ELK layered, one "band" at a time, stacked top to bottom.
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
import { SIZE } from "./theme.js";

/** Largest band handed to ELK in one piece; tuned on a 2-core machine (see tests/bench). */
const BAND_MAX = 120;
/** Above this band size ELK gets the fast options; below it, the library's quality defaults. */
const SMALL_BAND = 60;
const BAND_GAP = 120;
const PLANNING_GAP = 16;
/** Spacing shared by ELK's options and the sketch, so the sketch's bands have ELK's proportions. */
const PADDING = 12;
const NODE_GAP = 28;
const LAYER_GAP = 52;
/** Barycenter passes of the sketch, alternately down and up the band's layers. */
const SKETCH_SWEEPS = 3;

const BASE_OPTIONS = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
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
 * @typedef {object} Layout
 * @property {Map<string, Rect>} pos       every placed node's box (top-left, world units)
 * @property {Map<string, number[]>} routes ELK's orthogonal route per in-band data edge, keyed from\0to
 * @property {Band[]} bands
 * @property {number} planningRight  x where the next planning box goes
 * @property {number} bottom         y of the lowest band's bottom edge
 */

/** @returns {Layout} */
function emptyLayout() {
  return { pos: new Map(), routes: new Map(), bands: [], planningRight: 0, bottom: SIZE.planning.h };
}

/** @param {Layout} layout @returns {Layout} a copy that placing more nodes cannot disturb */
function cloneLayout(layout) {
  return {
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
 * @returns {LayoutPlan}
 */
export function layoutPlan({ model, previous }) {
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
  return { previous, planning: model.planning.filter((id) => !kept(id)), bands, preds };
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
  const pending = Promise.all(plan.bands.map((band) => layoutBand(band, client)));
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
  for (const band of plan.bands) stackBand(layout, band, sketchBand(band, plan.preds), new Map());
  return layout;
}

/** @param {LayoutPlan} plan @returns {Layout} the positions to keep plus the planning row */
function startLayout(plan) {
  const layout = plan.previous ? cloneLayout(plan.previous) : emptyLayout();
  for (const id of plan.planning) {
    layout.pos.set(id, { x: layout.planningRight, y: 0, ...sizeOf("planning") });
    layout.planningRight += SIZE.planning.w + PLANNING_GAP;
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

/** Kahn's algorithm restricted to `ids`; anything left in a cycle (invalid input) goes last. */
function longestPathLayers(ids, preds) {
  const inGroup = new Set(ids);
  const indegree = new Map(ids.map((id) => [id, 0]));
  const succs = new Map(ids.map((id) => [id, []]));
  for (const id of ids) {
    for (const pred of preds.get(id) || []) {
      if (!inGroup.has(pred)) continue;
      indegree.set(id, indegree.get(id) + 1);
      succs.get(pred).push(id);
    }
  }
  const layerOf = new Map(ids.map((id) => [id, 0]));
  const queue = ids.filter((id) => indegree.get(id) === 0);
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head];
    for (const next of succs.get(id)) {
      layerOf.set(next, Math.max(layerOf.get(next), layerOf.get(id) + 1));
      indegree.set(next, indegree.get(next) - 1);
      if (indegree.get(next) === 0) queue.push(next);
    }
  }
  const deepest = Math.max(0, ...layerOf.values());
  for (const id of ids) if (indegree.get(id) > 0) layerOf.set(id, deepest + 1);
  return layerOf;
}

function layoutBand(band, client) {
  const graph = {
    id: "band",
    children: band.ids.map((id) => ({ id, width: SIZE.node.w, height: SIZE.node.h })),
    edges: band.edges.map((edge, index) => ({ id: `e${index}`, sources: [edge.from], targets: [edge.to] })),
  };
  const options = band.ids.length > SMALL_BAND ? { ...BASE_OPTIONS, ...FAST_OPTIONS } : BASE_OPTIONS;
  return client.layout(graph, options);
}

/**
 * Lays out one band roughly the way ELK's fast options do, in the shape of ELK's answer: layers by
 * longest path to the band's sinks (ELK's LONGEST_PATH), the order in each layer from barycenter
 * sweeps, each layer centred. No routes: the scene draws the band's edges as curves.
 * @returns {ElkResult}
 */
function sketchBand(band, preds) {
  const members = new Set(band.ids);
  const succs = new Map(band.ids.map((id) => [id, []]));
  const above = new Map();
  for (const id of band.ids) {
    above.set(id, (preds.get(id) || []).filter((pred) => members.has(pred)));
    for (const pred of above.get(id)) succs.get(pred).push(id);
  }
  // Layers counted up from the sinks over the reversed edges, then flipped: sinks share the last row.
  const height = longestPathLayers(band.ids, succs);
  const deepest = Math.max(...height.values());
  const rows = Array.from({ length: deepest + 1 }, () => []);
  for (const id of band.ids) rows[deepest - height.get(id)].push(id);
  const x = new Map();
  for (const row of rows) centreRow(row, x);
  for (let sweep = 0; sweep < SKETCH_SWEEPS; sweep++) {
    const downwards = sweep % 2 === 0;
    const order = downwards ? rows.slice(1) : rows.slice(0, -1).reverse();
    for (const row of order) {
      const neighbours = downwards ? above : succs;
      const key = new Map(row.map((id) => [id, barycenter(neighbours.get(id), x) ?? x.get(id)]));
      row.sort((a, b) => key.get(a) - key.get(b));
      centreRow(row, x);
    }
  }
  let left = Infinity;
  for (const value of x.values()) left = Math.min(left, value);
  const step = SIZE.node.h + LAYER_GAP;
  const xy = new Float64Array(band.ids.length * 2);
  const rowOf = new Map(rows.flatMap((row, index) => row.map((id) => [id, index])));
  band.ids.forEach((id, index) => {
    xy[index * 2] = x.get(id) - left + PADDING;
    xy[index * 2 + 1] = rowOf.get(id) * step + PADDING;
  });
  const widest = Math.max(...rows.map((row) => row.length));
  return {
    width: widest * (SIZE.node.w + NODE_GAP) - NODE_GAP + 2 * PADDING,
    height: rows.length * step - LAYER_GAP + 2 * PADDING,
    xy,
    routes: band.edges.map(() => []),
  };
}

/** Sets the left x of each box in `row`, side by side in row order and centred on x = 0. */
function centreRow(row, x) {
  const step = SIZE.node.w + NODE_GAP;
  const start = -(row.length * step - NODE_GAP) / 2;
  row.forEach((id, index) => x.set(id, start + index * step));
}

/** @returns {number | null} mean x of the neighbours, or null when there are none */
function barycenter(neighbours, x) {
  if (!neighbours.length) return null;
  let sum = 0;
  for (const id of neighbours) sum += x.get(id);
  return sum / neighbours.length;
}

/**
 * Puts a laid-out band under everything placed so far. Horizontally it is shifted so its nodes sit,
 * on average, under their dependencies in earlier bands; a band with none is centred under the
 * previous band.
 */
function stackBand(layout, band, result, preds) {
  const { xy, routes, width, height } = result;
  let shift = 0;
  let pairs = 0;
  band.ids.forEach((id, index) => {
    for (const pred of preds.get(id) || []) {
      const source = layout.pos.get(pred);
      if (!source) continue;
      shift += source.x - xy[index * 2];
      pairs += 1;
    }
  });
  const previous = layout.bands[layout.bands.length - 1];
  let offsetX = 0;
  if (pairs) offsetX = Math.round(shift / pairs);
  else if (previous) offsetX = Math.round(previous.x + previous.w / 2 - width / 2);
  const offsetY = layout.bottom + BAND_GAP;
  band.ids.forEach((id, index) => {
    layout.pos.set(id, { x: xy[index * 2] + offsetX, y: xy[index * 2 + 1] + offsetY, ...sizeOf("node") });
  });
  band.edgeKeys.forEach((key, index) => {
    const points = routes[index];
    if (points.length) layout.routes.set(key, points.map((value, i) => value + (i % 2 ? offsetY : offsetX)));
  });
  layout.bands.push({ x: offsetX, y: offsetY, w: width, h: height, label: band.label });
  layout.bottom = offsetY + height;
}

/** @param {Layout} layout @returns {object} plain JSON for the cache */
export function layoutToJSON(layout) {
  return {
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
    pos: new Map(json.pos.map(([id, x, y, w, h]) => [id, { x, y, w, h }])),
    routes: new Map(json.routes.map(([from, to, points]) => [`${from}\u0000${to}`, points])),
    bands: json.bands,
    planningRight: json.planningRight,
    bottom: json.bottom,
  };
}
