/**
 * A long drawing wrapped to its canvas, as text wraps to a page: the work boxes are cut, between two
 * rows along the flow, into segments no longer than the canvas shows at a legible zoom, and each
 * segment is set beside the one before it (to the right of a top-down drawing, below a left-to-right
 * one). The planning calls head the drawing in a row: a top-down drawing's stays where it is; a
 * left-to-right drawing's column moves into a row above it, as the column would otherwise take its
 * width from the start of every segment (at 1280 px, a fifth of the reach). A view of a layout, never
 * stored: the layout itself (cached, served, appended to) is unchanged, so the server's layout and the
 * page's stay one. Pure functions.
 */
import { BAND_GAP, LAYER_GAP, PLANNING_GAP } from "./layout-sketch.js";

/** The gap between two segments, wide enough for the loop-back arcs that swing out beside a segment. */
export const WRAP_GAP = 64;
/** How far an edge between two segments runs out of its box before it turns: half a layer's gap. */
const WRAP_TURN = LAYER_GAP / 2;

/**
 * @typedef {import("./layout.js").Layout} Layout
 * @typedef {import("./layout.js").Rect} Rect
 * @typedef {{lo: number, hi: number, ids: string[]}} Row  boxes overlapping along the flow
 */

/**
 * `layout` with its work boxes wrapped into segments that each end at most `reach` along the flow
 * (world units from the drawing's start), or `layout` itself when one segment holds them all and the
 * planning calls already head it in a row. Edges between two segments lose ELK's route (the scene
 * draws them as curves); bands are cut with the segments, each later piece marked `continued` (its
 * label is drawn once, on the first).
 * @param {Layout} layout
 * @param {object} options
 * @param {number} options.reach  how far along the flow a segment may end
 * @param {Set<string>} options.header  the boxes that head the drawing and are not wrapped (planning)
 * @returns {Layout & {segments?: number, segmentOf?: Map<string, number>, gaps?: number[],
 *   planningRow?: boolean}}  `segmentOf`: each work box's segment, counted from 0 along the wrap; `gaps`:
 *   the middle of each gap between two segments, across the flow (wrapRoute); `planningRow`: whether a
 *   left-to-right drawing's planning column was moved into a row
 */
export function layoutWrapped(layout, { reach, header }) {
  const right = layout.direction === "RIGHT";
  const along = right ? "x" : "y";
  const length = right ? "w" : "h";
  const across = right ? "y" : "x";
  const breadth = right ? "h" : "w";
  const rows = layoutRows(layout, header, along, length);
  if (!rows.length) return layout;
  const heads = [...layout.pos.keys()].filter((id) => header.has(id));
  const headRow = right && heads.length > 0 ? planningRow(heads.map((id) => [id, layout.pos.get(id)]), reach) : null;
  // Where the first segment starts along the flow: where the work starts, or, once the planning column
  // has moved above, where it started.
  const start = headRow ? rows[0].lo - (headRow.column + BAND_GAP) : rows[0].lo;
  const segments = [];
  for (const row of rows) {
    const last = segments[segments.length - 1];
    // Each segment is moved to start where the first does, so it may span what lies from there to `reach`.
    if (last && row.hi - last.lo <= reach - start) {
      last.hi = row.hi;
      last.ids.push(...row.ids);
    } else {
      segments.push({ lo: row.lo, hi: row.hi, ids: [...row.ids] });
    }
  }
  if (segments.length < 2 && !headRow) return layout;
  const segmentOf = new Map();
  // Across, each segment follows the one before it; the first stays where it is, or starts a band's
  // gap below the planning row moved above it.
  let next = headRow ? headRow.end + BAND_GAP : null;
  const gaps = [];
  segments.forEach((segment, index) => {
    const rects = segment.ids.map((id) => layout.pos.get(id));
    const low = Math.min(...rects.map((rect) => rect[across]));
    if (index) gaps.push(next - WRAP_GAP / 2);
    segment.shift = { along: start - segment.lo, across: next === null ? 0 : next - low };
    next = Math.max(...rects.map((rect) => rect[across] + rect[breadth])) + segment.shift.across + WRAP_GAP;
    for (const id of segment.ids) segmentOf.set(id, index);
  });
  const moved = (segment) => ({ dx: right ? segment.shift.along : segment.shift.across,
    dy: right ? segment.shift.across : segment.shift.along });
  const pos = new Map(layout.pos);
  if (headRow) for (const [id, rect] of headRow.pos) pos.set(id, rect);
  for (const [id, index] of segmentOf) {
    const rect = layout.pos.get(id);
    const { dx, dy } = moved(segments[index]);
    pos.set(id, { ...rect, x: rect.x + dx, y: rect.y + dy });
  }
  const routes = new Map();
  for (const [key, points] of layout.routes) {
    const [from, to] = key.split("\u0000");
    const index = segmentOf.get(from);
    if (index === undefined || index !== segmentOf.get(to)) continue;
    const { dx, dy } = moved(segments[index]);
    routes.set(key, points.map((value, i) => value + (i % 2 ? dy : dx)));
  }
  const bands = layout.bands.flatMap((band) => bandPieces(band, segments, { along, length, moved }));
  return { ...layout, pos, routes, bands, segments: segments.length, segmentOf, gaps, planningRow: Boolean(headRow) };
}

/**
 * The route, as x0, y0, x1, y1, …, of an edge between two segments of a wrapped layout, through the
 * gap before the later one, as a line of text goes on at the start of the next: a data edge leaves its
 * source's end along the flow, runs along the gap and enters its target's start; a loop-back (`back`,
 * from a later segment to an earlier one) leaves its source's side facing that gap and enters its
 * target's far side. Edges drawn straight across would cross the whole drawing, all the more as they
 * join its two ends. Null when both ends are in one segment, or the layout is not wrapped.
 * @param {Layout & {segmentOf?: Map<string, number>, gaps?: number[]}} layout  as layoutWrapped returns it
 * @param {string} from
 * @param {string} to
 * @param {boolean} [back]
 * @returns {number[] | null}
 */
export function wrapRoute(layout, from, to, back = false) {
  const first = layout.segmentOf && layout.segmentOf.get(from);
  const second = layout.segmentOf && layout.segmentOf.get(to);
  if (first === undefined || second === undefined || first === second) return null;
  const right = layout.direction === "RIGHT";
  const [along, length, across, breadth] = right ? ["x", "w", "y", "h"] : ["y", "h", "x", "w"];
  const point = (a, c) => (right ? [a, c] : [c, a]);
  const gap = layout.gaps[Math.max(first, second) - 1];
  const source = layout.pos.get(from);
  const target = layout.pos.get(to);
  const middle = (rect, axis, size) => rect[axis] + rect[size] / 2;
  if (back) {
    const ends = [middle(source, along, length), middle(target, along, length)];
    return [point(ends[0], source[across]), point(ends[0], gap), point(ends[1], gap),
      point(ends[1], target[across] + target[breadth])].flat();
  }
  const out = source[along] + source[length] + WRAP_TURN;
  const into = target[along] - WRAP_TURN;
  return [point(out - WRAP_TURN, middle(source, across, breadth)), point(out, middle(source, across, breadth)),
    point(out, gap), point(into, gap), point(into, middle(target, across, breadth)),
    point(target[along], middle(target, across, breadth))].flat();
}

/**
 * The planning column of a left-to-right drawing laid out as rows above it, each as long as `reach`
 * allows, in the column's order.
 * @param {[string, Rect][]} heads  the column's boxes, top to bottom
 * @returns {{pos: Map<string, Rect>, column: number, end: number}}  each box's place; how wide the
 *   column was, and where the rows end across the flow
 */
export function planningRow(heads, reach) {
  const pos = new Map();
  let x = 0;
  let y = 0;
  let end = 0;
  for (const [id, rect] of heads) {
    if (x > 0 && x + rect.w > reach) {
      x = 0;
      y = end + PLANNING_GAP;
    }
    pos.set(id, { ...rect, x, y });
    x += rect.w + PLANNING_GAP;
    end = Math.max(end, y + rect.h);
  }
  const column = Math.max(...heads.map(([, rect]) => rect.x + rect.w));
  return { pos, column, end };
}

/**
 * The work boxes grouped into rows: boxes whose extents along the flow overlap share a row, and a
 * wrap may fall between any two rows.
 * @returns {Row[]}
 */
export function layoutRows(layout, header, along, length) {
  const boxes = [...layout.pos].filter(([id]) => !header.has(id)).sort((a, b) => a[1][along] - b[1][along]);
  const rows = [];
  for (const [id, rect] of boxes) {
    const last = rows[rows.length - 1];
    if (last && rect[along] < last.hi) {
      last.hi = Math.max(last.hi, rect[along] + rect[length]);
      last.ids.push(id);
    } else {
      rows.push({ lo: rect[along], hi: rect[along] + rect[length], ids: [id] });
    }
  }
  return rows;
}

/** A band cut at the segments it spans, each piece moved with its segment; all but the first `continued`. */
function bandPieces(band, segments, { along, length, moved }) {
  const pieces = [];
  segments.forEach((segment, index) => {
    const next = segments[index + 1];
    const lo = Math.max(band[along], index ? segment.lo : -Infinity);
    const hi = Math.min(band[along] + band[length], next ? next.lo : Infinity);
    if (hi <= lo) return;
    const { dx, dy } = moved(segment);
    const piece = { ...band, [along]: lo, [length]: hi - lo, continued: pieces.length > 0 };
    pieces.push({ ...piece, x: piece.x + dx, y: piece.y + dy });
  });
  return pieces;
}
