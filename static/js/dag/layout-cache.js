/**
 * Layouts cached per run, in memory (graphs re-created on the same page) and in localStorage (a
 * reload or a second tab), so a run is drawn exactly as before (same positions, no ELK call) and a
 * newer manifest version only places its appended nodes. One entry per run and flow direction (its
 * latest manifest version), the most recent few kept. Storage failures (private mode, quota) only cost the
 * cache, never the drawing.
 */
import { layoutFromJSON, layoutToJSON } from "./layout.js";

/** Bump when placement changes so old drawings are not reused. */
const VERSION = "v4";
const PREFIX = `dag-layout:${VERSION}:`;
const INDEX = `dag-layout:${VERSION}:index`;
const MAX_RUNS = 6;
/** A layout bigger than this (≈ 8,000 nodes) is not worth a synchronous localStorage write. */
const MAX_CHARS = 2_000_000;
/** @type {Map<string, {manifestVersion: number, layout: import("./layout.js").Layout}>} */
const memory = new Map();

/** @returns {string} a layout's key: its run and its flow direction */
function keyOf(runId, direction) {
  return `${runId}:${direction}`;
}

/**
 * @param {string} runId
 * @param {"DOWN" | "RIGHT"} direction
 * @returns {{manifestVersion: number, layout: import("./layout.js").Layout} | null}
 */
export function cacheRead(runId, direction) {
  const key = keyOf(runId, direction);
  if (memory.has(key)) return memory.get(key);
  try {
    const raw = localStorage.getItem(PREFIX + key);
    if (!raw) return null;
    const entry = JSON.parse(raw);
    return { manifestVersion: entry.manifestVersion, layout: layoutFromJSON(entry.layout) };
  } catch {
    return null;
  }
}

/**
 * @param {string} runId
 * @param {number} manifestVersion
 * @param {import("./layout.js").Layout} layout
 */
export function cacheWrite(runId, manifestVersion, layout) {
  const key = keyOf(runId, layout.direction);
  memory.delete(key);
  memory.set(key, { manifestVersion, layout });
  if (memory.size > MAX_RUNS) memory.delete(memory.keys().next().value);
  try {
    const raw = JSON.stringify({ manifestVersion, layout: layoutToJSON(layout) });
    if (raw.length > MAX_CHARS) return;
    const index = JSON.parse(localStorage.getItem(INDEX) || "[]").filter((id) => id !== key);
    index.unshift(key);
    for (const evicted of index.splice(MAX_RUNS)) localStorage.removeItem(PREFIX + evicted);
    localStorage.setItem(INDEX, JSON.stringify(index));
    localStorage.setItem(PREFIX + key, raw);
  } catch {
    // Quota or disabled storage: the next load lays out again, which is correct, only slower.
  }
}
