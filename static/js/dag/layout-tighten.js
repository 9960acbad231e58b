/**
 * A drawing a little too long for its canvas, shortened along the flow by narrowing the gaps between
 * its rows, before a fit would have to shrink its names: every gap evenly, no more than the drawing
 * needs, and none below half its width (arrows still show between two rows). Boxes keep their size
 * and their place across the flow, and ELK's routes stay orthogonal and attached: along the flow, a
 * point in a row moves with the row and a point in a gap keeps its place within the narrowed gap. A
 * view of a layout, never stored, as a wrap is (layout-wrap.js). Pure functions.
 */
import { layoutRows } from "./layout-wrap.js";

/** The narrowest a gap between two rows may become, as a share of its width. */
export const TIGHTEST = 0.5;

/**
 * @typedef {import("./layout.js").Layout} Layout
 */

/**
 * `layout` shortened along the flow by `by` world units, or by as much as its gaps allow when that is
 * less, or `layout` itself when it has nothing to shorten.
 * @param {Layout} layout
 * @param {object} options
 * @param {number} options.by  how much shorter the drawing should be
 * @param {Set<string>} options.header  the boxes that head the drawing (planning): they stay put
 * @returns {Layout}
 */
export function layoutTightened(layout, { by, header }) {
  const right = layout.direction === "RIGHT";
  const along = right ? "x" : "y";
  const length = right ? "w" : "h";
  const rows = layoutRows(layout, header, along, length);
  const gaps = rows.slice(1).map((row, index) => ({ lo: rows[index].hi, hi: row.lo }));
  const total = gaps.reduce((sum, gap) => sum + gap.hi - gap.lo, 0);
  if (by <= 0 || total <= 0) return layout;
  const cut = Math.min(1 - TIGHTEST, by / total);
  const moved = alongMap(gaps, cut);
  const at = (rect) => ({ ...rect, [along]: moved(rect[along]) });
  const pos = new Map([...layout.pos].map(([id, rect]) => [id, header.has(id) ? rect : at(rect)]));
  const routes = new Map([...layout.routes].map(([key, points]) => [
    key, points.map((value, index) => (index % 2 === (right ? 0 : 1) ? moved(value) : value)),
  ]));
  const bands = layout.bands.map((band) => {
    const start = moved(band[along]);
    return { ...band, [along]: start, [length]: moved(band[along] + band[length]) - start };
  });
  return { ...layout, pos, routes, bands, bottom: moved(layout.bottom) };
}

/**
 * The map of a coordinate along the flow once each gap is narrowed by `cut` of its width: what lies
 * before the first gap stays, a row moves back by all the narrowing before it, and a point in a gap
 * keeps its share of the gap.
 * @param {{lo: number, hi: number}[]} gaps  in order along the flow
 * @param {number} cut  the share of each gap taken out
 * @returns {(value: number) => number}
 */
export function alongMap(gaps, cut) {
  return (value) => {
    let removed = 0;
    for (const gap of gaps) {
      if (value <= gap.lo) break;
      if (value < gap.hi) return value - removed - (value - gap.lo) * cut;
      removed += (gap.hi - gap.lo) * cut;
    }
    return value - removed;
  };
}
