/**
 * Colours, glyphs and sizes shared by the renderers and the legend, so the legend can never
 * disagree with the drawing. Status colours are light fills with a dark, same-hue stroke and text:
 * every text colour here has at least 4.5:1 contrast on its fill (WCAG AA), and each status also
 * has a glyph so colour is never the only cue. What a status reads as is the server's
 * (status-vocabulary.js): the styles are keyed by status, and say nothing in words.
 */

/** @typedef {{fill: string, stroke: string, text: string, glyph: string}} StatusStyle */

/** @type {Record<string, StatusStyle>} */
export const STATUS = {
  succeeded: { fill: "#dcfce7", stroke: "#15803d", text: "#166534", glyph: "✓" },
  running: { fill: "#dbeafe", stroke: "#1d4ed8", text: "#1e40af", glyph: "▶" },
  queued: { fill: "#fef9c3", stroke: "#a16207", text: "#854d0e", glyph: "…" },
  failed: { fill: "#fee2e2", stroke: "#b91c1c", text: "#991b1b", glyph: "✕" },
  blocked: { fill: "#ffedd5", stroke: "#c2410c", text: "#9a3412", glyph: "⊘" },
  cancelled: { fill: "#e2e8f0", stroke: "#475569", text: "#334155", glyph: "–" },
  // Waiting on a person, not on a worker: the review's violet, as the status chips have it.
  awaiting_review: { fill: "#f3e8ff", stroke: "#7e22ce", text: "#6b21a8", glyph: "⧗" },
  changes_requested: { fill: "#fce7f3", stroke: "#be185d", text: "#9d174d", glyph: "↺" },
  pending: { fill: "#f8fafc", stroke: "#64748b", text: "#475569", glyph: "○" },
  not_started: { fill: "#ffffff", stroke: "#94a3b8", text: "#475569", glyph: "○" },
};

/** @param {string} status @returns {StatusStyle} */
export function statusStyle(status) {
  return STATUS[status] || STATUS.not_started;
}

/**
 * Link styles: `zero_token` hand-offs are thin and grey, `needs_judgment` edges thick and violet,
 * `on_failure` loop-backs dashed red arcs; `retry` is the timeline's same-node retry arrow and
 * `grid` its time ticks (unlabelled styles stay out of the legend).
 * @type {Record<string, {color: string, width: number, dash: number[], label: string}>}
 */
export const LINK = {
  zero_token: { color: "#94a3b8", width: 1.25, dash: [], label: "zero_token hand-off" },
  needs_judgment: { color: "#7c3aed", width: 2, dash: [], label: "needs_judgment" },
  on_failure: { color: "#dc2626", width: 2.25, dash: [8, 5], label: "on_failure loop-back (×fired)" },
  retry: { color: "#b45309", width: 1.75, dash: [3, 3] },
  grid: { color: "#e2e8f0", width: 1, dash: [], label: "" },
};

export const INK = "#0f172a";
/** The underline of the timeline's critical-path bars. */
export const CRITICAL = "#0f172a";
export const MUTED_INK = "#475569";
export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
export const PLANNING = { fill: "#f5f3ff", stroke: "#6d28d9", text: "#4c1d95" };
export const BAND = { fill: "rgba(241, 245, 249, 0.7)", stroke: "#cbd5e1", text: "#475569" };

/**
 * The inks of the scene around the boxes (lane names, ticks, bands, the time grid) for the page's
 * colour scheme: the stage's CSS custom properties (dag.css sets them in dark mode), else the light
 * defaults. Boxes keep their status colours in both schemes.
 * @param {Element} element  the drawing's host
 */
export function sceneInks(element) {
  const style = getComputedStyle(element);
  const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: read("--dag-scene-ink", MUTED_INK),
    bandFill: read("--dag-band-fill", BAND.fill),
    bandStroke: read("--dag-band-stroke", BAND.stroke),
    bandText: read("--dag-band-text", BAND.text),
    grid: read("--dag-grid", LINK.grid.color),
    halo: read("--dag-halo", "#ffffff"),
  };
}

/**
 * The minimap's inks for the page's colour scheme, read like the scene's: its ground (where no box
 * is), its frame, and the outline of the part on screen. dag.css sets `--dag-minimap-*` in both
 * schemes; these defaults are the light ones.
 * @param {Element} element  the minimap, or any element inside the drawing
 */
export function minimapInks(element) {
  const style = getComputedStyle(element);
  const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    ground: read("--dag-minimap-ground", "rgba(255, 255, 255, 0.92)"),
    frame: read("--dag-minimap-frame", "#94a3b8"),
    view: read("--dag-minimap-view", "#2563eb"),
  };
}

/**
 * Box sizes in world units (pixels at zoom 1). A box is wide enough for a 24-character name in its
 * 13 px title font, and no taller than its two lines need: the fit of a graph of 20 boxes at a
 * legible zoom (legibility.js) is spent on these sizes and the gaps between them (layout-sketch.js).
 */
export const SIZE = {
  node: { w: 226, h: 50 },
  planning: { w: 226, h: 30 },
  lane: 30,
  attempt: 20,
};
