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
 */
import { SIZE } from "./theme.js";

/** Largest band handed to ELK in one piece; tuned on a 2-core machine (see tests/bench). */
const BAND_MAX = 120;
/** Above this band size ELK gets the fast options; below it, the library's quality defaults. */
const SMALL_BAND = 60;
const BAND_GAP = 120;
const PLANNING_GAP = 16;

const BASE_OPTIONS = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.padding": "[top=12,left=12,bottom=12,right=12]",
  "elk.spacing.nodeNode": "28",
  "elk.spacing.edgeEdge": "8",
  "elk.spacing.edgeNode": "12",
  "elk.layered.spacing.nodeNodeBetweenLayers": "52",
  "elk.layered.spacing.edgeNodeBetweenLayers": "14",
  "elk.layered.spacing.edgeEdgeBetweenLayers": "6",
  // A band cut from a bigger graph falls apart into many small components; packing them one under
  // another costs time and breaks the layer rows. Laid out together, a layer stays one row.
  "elk.separateConnectedComponents": "false",
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
 * @typedef {{x: number, y: number, w: number, h: number}} Rect
 * @typedef {{x: number, y: number, w: number, h: number, label: string}} Band
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
 * Places every node of `model` that `previous` has not placed.
 * @param {object} args
 * @param {import("./model.js").Model} args.model
 * @param {Layout | null} args.previous  positions to keep (an earlier manifest version), or null
 * @param {{layout: Function}} args.client  the layout worker (layout-client.js)
 * @returns {Promise<Layout>}
 */
export async function layoutPlace({ model, previous, client }) {
  const layout = previous ? cloneLayout(previous) : emptyLayout();
  for (const id of model.planning) {
    if (layout.pos.has(id)) continue;
    layout.pos.set(id, { x: layout.planningRight, y: 0, ...sizeOf("planning") });
    layout.planningRight += SIZE.planning.w + PLANNING_GAP;
  }
  const fresh = model.order.filter((id) => !layout.pos.has(id));
  const preds = predecessors(model.dataEdges);
  const groups = !previous && fresh.length <= BAND_MAX ? [{ org: "", ids: fresh }] : layoutStages(fresh, model);
  const bands = groups.flatMap((group) => splitIntoBands(group, preds));
  const results = await Promise.all(bands.map((band) => layoutBand(band, model, client)));
  bands.forEach((band, index) => stackBand(layout, band, results[index], preds));
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

function layoutBand(band, model, client) {
  const members = new Set(band.ids);
  const edges = model.dataEdges.filter((edge) => members.has(edge.from) && members.has(edge.to));
  band.edgeKeys = edges.map((edge) => `${edge.from}\u0000${edge.to}`);
  const graph = {
    id: "band",
    children: band.ids.map((id) => ({ id, width: SIZE.node.w, height: SIZE.node.h })),
    edges: edges.map((edge, index) => ({ id: `e${index}`, sources: [edge.from], targets: [edge.to] })),
  };
  const options = band.ids.length > SMALL_BAND ? { ...BASE_OPTIONS, ...FAST_OPTIONS } : BASE_OPTIONS;
  return client.layout(graph, options);
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
    routes: [...layout.routes],
    bands: layout.bands,
    planningRight: layout.planningRight,
    bottom: layout.bottom,
  };
}

/** @returns {Layout} */
export function layoutFromJSON(json) {
  return {
    pos: new Map(json.pos.map(([id, x, y, w, h]) => [id, { x, y, w, h }])),
    routes: new Map(json.routes),
    bands: json.bands,
    planningRight: json.planningRight,
    bottom: json.bottom,
  };
}
