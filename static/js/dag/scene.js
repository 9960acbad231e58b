/**
 * Scenes: what a view draws, in world coordinates, independent of the renderer.
 *
 * A scene is built once per layout (or per timeline rebuild); live updates only change the node
 * and attempt objects that boxes point to, and the renderers read status, attempts and fired
 * counts at paint time. Paths are SVG path strings: the SVG renderer uses them as they are and the
 * canvas renderer turns them into Path2D objects, so both draw exactly the same geometry.
 *
 * @typedef {{id: string, kind: "node"|"planning"|"attempt"|"group", x: number, y: number, w: number,
 *            h: number, node?: object, attempt?: object, highlight?: boolean, stage?: number,
 *            title?: string, summary?: string}} SceneBox
 * @typedef {{style: string, d: string, arrow: number[] | null, edge?: object, labelAt?: number[]}} SceneLink
 * @typedef {{x: number, y: number, text: string, role: string, align?: CanvasTextAlign}} SceneText
 * @typedef {{x: number, y: number, w: number, h: number, label: string}} SceneBand
 * @typedef {{bounds: {x: number, y: number, w: number, h: number}, bands: SceneBand[],
 *            links: SceneLink[], boxes: SceneBox[], texts: SceneText[]}} Scene
 */

/**
 * Builds the path and arrowhead of a polyline, rounding its corners. Indexes the flat array rather
 * than destructuring each corner: a large graph has thousands of routes, and the arrays that would
 * allocate make the garbage collector run during the first paint.
 */
export function roundedPolyline(points, radius = 8) {
  const count = points.length / 2;
  let d = `M${points[0]},${points[1]}`;
  for (let i = 1; i < count - 1; i++) {
    const px = points[i * 2 - 2];
    const py = points[i * 2 - 1];
    const cx = points[i * 2];
    const cy = points[i * 2 + 1];
    const nx = points[i * 2 + 2];
    const ny = points[i * 2 + 3];
    const inLength = Math.hypot(cx - px, cy - py);
    const outLength = Math.hypot(nx - cx, ny - cy);
    const r = Math.min(radius, inLength / 2, outLength / 2);
    if (!r) continue;
    const ax = cx - ((cx - px) / inLength) * r;
    const ay = cy - ((cy - py) / inLength) * r;
    const bx = cx + ((nx - cx) / outLength) * r;
    const by = cy + ((ny - cy) / outLength) * r;
    d += `L${ax},${ay}Q${cx},${cy} ${bx},${by}`;
  }
  const end = points.length;
  const ex = points[end - 2];
  const ey = points[end - 1];
  d += `L${ex},${ey}`;
  return { d, arrow: [ex, ey, Math.atan2(ey - points[end - 3], ex - points[end - 4])] };
}

/** A cubic Bézier path with its arrowhead (pointing along the last control leg) and midpoint. */
export function cubic(sx, sy, c1x, c1y, c2x, c2y, ex, ey) {
  return {
    d: `M${sx},${sy}C${c1x},${c1y} ${c2x},${c2y} ${ex},${ey}`,
    arrow: [ex, ey, Math.atan2(ey - c2y, ex - c2x)],
    mid: [(sx + 3 * c1x + 3 * c2x + ex) / 8, (sy + 3 * c1y + 3 * c2y + ey) / 8],
  };
}

/** Grows `bounds` to hold the rectangle. */
export function include(bounds, x, y, w = 0, h = 0) {
  bounds.minX = Math.min(bounds.minX, x);
  bounds.minY = Math.min(bounds.minY, y);
  bounds.maxX = Math.max(bounds.maxX, x + w);
  bounds.maxY = Math.max(bounds.maxY, y + h);
}

export function emptyBounds() {
  return { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
}

/** Pads the accumulated extremes into an {x, y, w, h} rectangle (a unit box when empty). */
export function finishBounds(bounds, pad = 24) {
  if (!Number.isFinite(bounds.minX)) return { x: 0, y: 0, w: 1, h: 1 };
  return {
    x: bounds.minX - pad,
    y: bounds.minY - pad,
    w: bounds.maxX - bounds.minX + 2 * pad,
    h: bounds.maxY - bounds.minY + 2 * pad,
  };
}
