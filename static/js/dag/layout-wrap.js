/**
 * A long drawing wrapped to its canvas, as text wraps to a page: the work boxes are cut, between two
 * rows along the flow, into segments no longer than the canvas shows at a legible zoom, and each
 * segment is set beside the one before it (to the right of a top-down drawing, below a left-to-right
 * one). The planning row stays where it heads the drawing. A view of a layout, never stored: the
 * layout itself (cached, served, appended to) is unchanged, so the server's layout and the page's stay
 * one. Pure functions.
 */

/** The gap between two segments, wide enough for the loop-back arcs that swing out beside a segment. */
export const WRAP_GAP = 64;

/**
 * @typedef {import("./layout.js").Layout} Layout
 * @typedef {{lo: number, hi: number, ids: string[]}} Row  boxes overlapping along the flow
 */

/**
 * `layout` with its work boxes wrapped into segments that each end at most `reach` along the flow
 * (world units from the drawing's start), or `layout` itself when one segment holds them all. Edges
 * between two segments lose ELK's route (the scene draws them as curves); bands are cut with the
 * segments, each later piece marked `continued` (its label is drawn once, on the first).
 * @param {Layout} layout
 * @param {object} options
 * @param {number} options.reach  how far along the flow a segment may end
 * @param {Set<string>} options.header  the boxes that head the drawing and are not wrapped (planning)
 * @returns {Layout & {segments?: number}}
 */
export function layoutWrapped(layout, { reach, header }) {
  const right = layout.direction === "RIGHT";
  const along = right ? "x" : "y";
  const length = right ? "w" : "h";
  const across = right ? "y" : "x";
  const breadth = right ? "h" : "w";
  const rows = layoutRows(layout, header, along, length);
  if (!rows.length) return layout;
  const segments = [];
  for (const row of rows) {
    const last = segments[segments.length - 1];
    // Each segment is moved to start where the first does, so it may span what lies from there to `reach`.
    if (last && row.hi - last.lo <= reach - rows[0].lo) {
      last.hi = row.hi;
      last.ids.push(...row.ids);
    } else {
      segments.push({ lo: row.lo, hi: row.hi, ids: [...row.ids] });
    }
  }
  if (segments.length < 2) return layout;
  const segmentOf = new Map();
  let next = 0;
  segments.forEach((segment, index) => {
    const rects = segment.ids.map((id) => layout.pos.get(id));
    const low = Math.min(...rects.map((rect) => rect[across]));
    segment.shift = { along: rows[0].lo - segment.lo, across: index ? next - low : 0 };
    next = Math.max(...rects.map((rect) => rect[across] + rect[breadth])) + segment.shift.across + WRAP_GAP;
    for (const id of segment.ids) segmentOf.set(id, segment);
  });
  const moved = (segment) => ({ dx: right ? segment.shift.along : segment.shift.across,
    dy: right ? segment.shift.across : segment.shift.along });
  const pos = new Map(layout.pos);
  for (const [id, segment] of segmentOf) {
    const rect = layout.pos.get(id);
    const { dx, dy } = moved(segment);
    pos.set(id, { ...rect, x: rect.x + dx, y: rect.y + dy });
  }
  const routes = new Map();
  for (const [key, points] of layout.routes) {
    const [from, to] = key.split("\u0000");
    const segment = segmentOf.get(from);
    if (!segment || segment !== segmentOf.get(to)) continue;
    const { dx, dy } = moved(segment);
    routes.set(key, points.map((value, index) => value + (index % 2 ? dy : dx)));
  }
  const bands = layout.bands.flatMap((band) => bandPieces(band, segments, { along, length, moved }));
  return { ...layout, pos, routes, bands, segments: segments.length };
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
