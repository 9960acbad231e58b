/**
 * The geometry shared by ELK's options and the quick sketch (layout.js), in either flow direction:
 * the spacing, the longest-path layers of a band, a band laid out the way ELK's fast options roughly
 * do, and each direction's rough extent, from which the run graph picks the direction that fits its
 * canvas. Pure functions, no DOM: the server runs them in Node.js too (graphs/layout/dag_layout.mjs).
 *
 * "Along" is the flow axis (y top-down, x left-to-right), "across" the other one.
 */
import { SIZE } from "./theme.js";

/**
 * Spacing shared by ELK's options and the sketch, so the sketch's bands have ELK's proportions: as
 * tight as arrows and a band's label (12 px, above the band) allow, so small graphs fit legibly.
 */
export const PADDING = 12;
export const NODE_GAP = 20;
export const LAYER_GAP = 36;
export const BAND_GAP = 40;
export const PLANNING_GAP = 12;
/** Barycenter passes of the sketch, alternately down and up the band's layers. */
const SKETCH_SWEEPS = 3;

/** @typedef {"DOWN" | "RIGHT"} Direction  ELK's top-down or left-to-right */
export const DIRECTIONS = ["DOWN", "RIGHT"];

/** @param {Direction} direction @returns {{along: number, across: number}} a work box's size on each axis */
export function boxAxes(direction) {
  return direction === "RIGHT"
    ? { along: SIZE.node.w, across: SIZE.node.h }
    : { along: SIZE.node.h, across: SIZE.node.w };
}

/** Kahn's algorithm restricted to `ids`; anything left in a cycle (invalid input) goes last. */
export function longestPathLayers(ids, preds) {
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

/**
 * The rough size of the drawing in each direction, from the bands' layer counts and widest layers
 * (ELK's drawing is within a few tens of percent of it): enough to tell which direction fits a canvas.
 * @param {import("./layout.js").LayoutPlan} plan
 * @returns {Record<Direction, {w: number, h: number}>}
 */
export function planExtents(plan) {
  let depth = 0;
  let breadth = 0;
  const shapes = plan.bands.map((band) => {
    const layers = longestPathLayers(band.ids, plan.preds);
    const counts = new Map();
    for (const layer of layers.values()) counts.set(layer, (counts.get(layer) || 0) + 1);
    return { layers: counts.size, widest: Math.max(1, ...counts.values()) };
  });
  const extents = {};
  for (const direction of DIRECTIONS) {
    const { along, across } = boxAxes(direction);
    depth = 0;
    breadth = 0;
    for (const { layers, widest } of shapes) {
      depth += layers * (along + LAYER_GAP) - LAYER_GAP + 2 * PADDING + BAND_GAP;
      breadth = Math.max(breadth, widest * (across + NODE_GAP) - NODE_GAP + 2 * PADDING);
    }
    const planning = plan.planning.length;
    if (direction === "RIGHT") {
      depth += planning ? SIZE.planning.w : 0;
      breadth = Math.max(breadth, planning * (SIZE.planning.h + PLANNING_GAP));
      extents.RIGHT = { w: depth, h: breadth };
    } else {
      depth += planning ? SIZE.planning.h : 0;
      breadth = Math.max(breadth, planning * (SIZE.planning.w + PLANNING_GAP));
      extents.DOWN = { w: breadth, h: depth };
    }
  }
  return extents;
}

/**
 * Lays out one band roughly the way ELK's fast options do, in the shape of ELK's answer: layers by
 * longest path to the band's sinks (ELK's LONGEST_PATH), the order in each layer from barycenter
 * sweeps, each layer centred. No routes: the scene draws the band's edges as curves.
 * @param {{ids: string[], edges: object[]}} band
 * @param {Map<string, string[]>} preds
 * @param {Direction} direction
 * @returns {import("./layout-client.js").ElkResult}
 */
export function sketchBand(band, preds, direction) {
  const members = new Set(band.ids);
  const succs = new Map(band.ids.map((id) => [id, []]));
  const above = new Map();
  for (const id of band.ids) {
    above.set(id, (preds.get(id) || []).filter((pred) => members.has(pred)));
    for (const pred of above.get(id)) succs.get(pred).push(id);
  }
  const { along, across } = boxAxes(direction);
  // Layers counted up from the sinks over the reversed edges, then flipped: sinks share the last row.
  const height = longestPathLayers(band.ids, succs);
  const deepest = Math.max(...height.values());
  const rows = Array.from({ length: deepest + 1 }, () => []);
  for (const id of band.ids) rows[deepest - height.get(id)].push(id);
  const cross = new Map();
  for (const row of rows) centreRow(row, cross, across);
  for (let sweep = 0; sweep < SKETCH_SWEEPS; sweep++) {
    const downwards = sweep % 2 === 0;
    const order = downwards ? rows.slice(1) : rows.slice(0, -1).reverse();
    for (const row of order) {
      const neighbours = downwards ? above : succs;
      const key = new Map(row.map((id) => [id, barycenter(neighbours.get(id), cross) ?? cross.get(id)]));
      row.sort((a, b) => key.get(a) - key.get(b));
      centreRow(row, cross, across);
    }
  }
  let first = Infinity;
  for (const value of cross.values()) first = Math.min(first, value);
  const step = along + LAYER_GAP;
  const xy = new Float64Array(band.ids.length * 2);
  const rowOf = new Map(rows.flatMap((row, index) => row.map((id) => [id, index])));
  const [acrossIndex, alongIndex] = direction === "RIGHT" ? [1, 0] : [0, 1];
  band.ids.forEach((id, index) => {
    xy[index * 2 + acrossIndex] = cross.get(id) - first + PADDING;
    xy[index * 2 + alongIndex] = rowOf.get(id) * step + PADDING;
  });
  const widest = Math.max(...rows.map((row) => row.length));
  const breadth = widest * (across + NODE_GAP) - NODE_GAP + 2 * PADDING;
  const depth = rows.length * step - LAYER_GAP + 2 * PADDING;
  return {
    width: direction === "RIGHT" ? depth : breadth,
    height: direction === "RIGHT" ? breadth : depth,
    xy,
    routes: band.edges.map(() => []),
  };
}

/** Sets the cross-axis start of each box in `row`, side by side in row order and centred on 0. */
function centreRow(row, cross, size) {
  const step = size + NODE_GAP;
  const start = -(row.length * step - NODE_GAP) / 2;
  row.forEach((id, index) => cross.set(id, start + index * step));
}

/** @returns {number | null} mean cross position of the neighbours, or null when there are none */
function barycenter(neighbours, cross) {
  if (!neighbours.length) return null;
  let sum = 0;
  for (const id of neighbours) sum += cross.get(id);
  return sum / neighbours.length;
}
