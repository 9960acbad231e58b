/**
 * How large the run graph is drawn, so node names stay legible: the zoom a fit may use, where a
 * graph too big to fit legibly opens, and which flow direction fits a canvas best. Pure functions.
 */
import { focusStatuses } from "../status-vocabulary.js";

/** The smallest on-screen height, in CSS px, a node title may be drawn at by a fit. */
export const LEGIBLE_PX = 11;
/** The font size of a node title at zoom 1 (labels.js's FONTS.title). */
export const TITLE_PX = 13;
/** The font size of a timeline's lane name at zoom 1 (FONTS.lane). */
export const LANE_PX = 12;
/** The smallest zoom at which node titles are legible. */
export const LEGIBLE_SCALE = LEGIBLE_PX / TITLE_PX;
/**
 * The stage the server lays a graph out for (graphs/layout/dag_layout.mjs): the run page's at a
 * 1440 × 900 window with the side panel closed. A page whose stage picks the same direction takes
 * the server's layout as it is.
 */
export const REFERENCE_CANVAS = { w: 1200, h: 640 };
/** A fit never enlarges a drawing past 1:1: a small graph keeps its natural size. */
const MAX_FIT_SCALE = 1;
/** The margin, in screen px, kept around the focus of a drawing too big to fit legibly. */
const FOCUS_MARGIN = 16;

/**
 * @typedef {{x: number, y: number, w: number, h: number}} Rect
 * @typedef {{scale: number, tx: number, ty: number}} Transform  screen = world × scale + (tx, ty)
 */

/** @returns {number} the zoom that shows all of `bounds` in a `width` × `height` canvas, at most 1:1 */
export function wholeScale(bounds, width, height) {
  return Math.min(MAX_FIT_SCALE, width / Math.max(1, bounds.w), height / Math.max(1, bounds.h));
}

/**
 * The transform of a fit: all of `bounds`, centred, when that keeps titles at `minScale` or more;
 * else zoom `minScale` with `focus` (the active or first nodes) at the top-left, in view.
 * @param {Rect} bounds  the drawing
 * @param {number} width  the canvas, in CSS px
 * @param {number} height
 * @param {object} [options]
 * @param {number} [options.minScale]  the smallest legible zoom
 * @param {Rect | null} [options.focus]  what a drawing too big to fit legibly opens on
 * @returns {Transform & {whole: boolean}}  `whole`: the whole drawing is in view
 */
export function fitTransform(bounds, width, height, { minScale = LEGIBLE_SCALE, focus = null } = {}) {
  const whole = wholeScale(bounds, width, height);
  if (whole >= minScale) {
    return {
      scale: whole,
      tx: (width - bounds.w * whole) / 2 - bounds.x * whole,
      ty: (height - bounds.h * whole) / 2 - bounds.y * whole,
      whole: true,
    };
  }
  const scale = minScale;
  const target = focus || bounds;
  // Per axis: a drawing that fits is centred; else it is shown from its start when the focus is in
  // the first half of the canvas from there, or with the focus a margin from the top-left; and the
  // drawing's far edge never comes inside the canvas (no empty space past its end).
  const offset = (low, size, room, focusLow) => {
    if (size * scale <= room) return (room - size * scale) / 2 - low * scale;
    const fromStart = (focusLow - low) * scale < room / 2;
    const onFocus = fromStart ? -low * scale : FOCUS_MARGIN - focusLow * scale;
    return Math.max(onFocus, room - (low + size) * scale);
  };
  const tx = offset(bounds.x, bounds.w, width, target.x);
  const ty = offset(bounds.y, bounds.h, height, target.y);
  return { scale, tx, ty, whole: false };
}

/**
 * The rectangle around the boxes a drawing too big to fit legibly opens on: its work nodes' (planning
 * calls only when there is no other box), those of the server's focus statuses in their order (running,
 * else failed: graphs.runs.vocabulary.FOCUS_STATUSES), else the first in
 * reading order (top-left). A planning lane heads the drawing, often far from its first work node:
 * opened on it, a narrow screen would show a planning box and empty stage.
 * @param {{x: number, y: number, w: number, h: number, status?: string, kind?: string}[]} boxes
 * @returns {Rect | null}
 */
export function focusRect(boxes) {
  const work = boxes.filter((box) => box.kind !== "planning");
  const pool = work.length ? work : boxes;
  if (!pool.length) return null;
  for (const status of focusStatuses()) {
    const picked = pool.filter((box) => box.status === status);
    if (picked.length) return around(picked);
  }
  let first = pool[0];
  for (const box of pool) if (box.y < first.y || (box.y === first.y && box.x < first.x)) first = box;
  return around([first]);
}

function around(boxes) {
  const x = Math.min(...boxes.map((box) => box.x));
  const y = Math.min(...boxes.map((box) => box.y));
  return {
    x, y, w: Math.max(...boxes.map((box) => box.x + box.w)) - x, h: Math.max(...boxes.map((box) => box.y + box.h)) - y,
  };
}

/** The margin a graph's scene keeps around its drawing (scene-graph.js), in world units. */
export const SCENE_MARGIN = 20;

/**
 * How far along the flow, in world units from the drawing's start, a drawing may reach and still fit
 * `alongPx` screen px at the legible zoom: where a long drawing wraps (layout-wrap.js).
 * @param {number} alongPx  the canvas along the flow: its height top-down, its width left to right
 */
export function legibleReach(alongPx) {
  return alongPx / LEGIBLE_SCALE - 2 * SCENE_MARGIN;
}

/**
 * The flow direction whose drawing fits a canvas best, from the zoom at which each fits it whole (as
 * drawn, wrapped or not: layout-direction.js): one legible before one that is not, then the one at
 * the larger zoom; top-down when both fit at 1:1, or when they tie (within 5 %).
 * @param {Record<"DOWN" | "RIGHT", number>} scales
 * @returns {"DOWN" | "RIGHT"}
 */
export function chooseDirection(scales) {
  const down = scales.DOWN >= LEGIBLE_SCALE;
  const right = scales.RIGHT >= LEGIBLE_SCALE;
  if (down !== right) return right ? "RIGHT" : "DOWN";
  return scales.RIGHT > scales.DOWN * 1.05 ? "RIGHT" : "DOWN";
}

/** @returns {number} the on-screen height in CSS px of a `fontPx` title at zoom `scale`, to 0.1 px */
export function labelPx(fontPx, scale) {
  return Math.floor(fontPx * scale * 10) / 10;
}
