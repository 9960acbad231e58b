/**
 * Which layout the run graph starts from when it loads or appends: the server's (graph.json's
 * `layout.placed`) or this browser's cache of the run, and whether it places every node already.
 */
import { cacheRead } from "./layout-cache.js";
import { layoutFromJSON } from "./layout.js";

/**
 * The layout a load starts from: the server's (`served`) or the run's cached one, if it flows in
 * `direction` and every node it places is still in `next`, with `complete` when it places all of
 * `next` (the cache's also for the same manifest version): then no layout is needed at all. The
 * server's comes first: it is the one every visitor sees. Neither complete, the one placing more
 * nodes is kept and the rest placed.
 * @param {import("./model.js").Model} next
 * @param {object | null} served  graph.json's `layout.placed` (layoutToJSON), or null
 * @param {"DOWN" | "RIGHT"} direction
 * @returns {{layout: import("./layout.js").Layout, complete: boolean} | null}
 */
export function startingLayout(next, served, direction) {
  const drawn = (layout) => [...layout.pos.keys()].every((id) => next.nodes.has(id));
  const placesAll = (layout) => [...next.planning, ...next.order].every((id) => layout.pos.has(id));
  const candidates = [];
  if (served) {
    const layout = layoutFromJSON(served);
    if (layout.direction === direction && drawn(layout)) candidates.push({ layout, complete: placesAll(layout) });
  }
  const cached = cacheRead(next.run.run_id, direction);
  if (cached && drawn(cached.layout)) {
    const complete = cached.manifestVersion === next.run.manifest_version && placesAll(cached.layout);
    candidates.push({ layout: cached.layout, complete });
  }
  const whole = candidates.find((candidate) => candidate.complete);
  if (whole) return whole;
  candidates.sort((a, b) => b.layout.pos.size - a.layout.pos.size);
  return candidates[0] || null;
}

/** @param {object} payload graph.json @returns {object | null} the server's layout of the run, if any */
export function servedLayout(payload) {
  return (payload.layout && payload.layout.placed) || null;
}

/**
 * Whether `candidate` places every node of `next` and keeps every box of `drawn` where it is: then an
 * append can take it whole, and nothing on screen moves.
 */
export function keepsEveryPosition(candidate, drawn, next) {
  if (![...next.planning, ...next.order].every((id) => candidate.pos.has(id))) return false;
  for (const [id, rect] of drawn.pos) {
    const kept = candidate.pos.get(id);
    if (!kept || kept.x !== rect.x || kept.y !== rect.y) return false;
  }
  return true;
}
