/**
 * The "as it ran" view: every attempt in time order. One lane per node (lanes ordered by the node's
 * first start, so the run reads top-left to bottom-right), each attempt a box spanning its
 * start and finish on a shared time axis. Arrows show why an attempt exists: a dashed red arc
 * from the failing attempt that looped back to it, or an amber hop from the node's own previous
 * attempt for a retry. Attempts still queued sit in a column after the last known moment.
 *
 * The critical path (critical-path.js) is marked on its bars, and each bar says how long it took.
 *
 * The axis is linear while something runs, but an idle stretch (a run waiting on approval, a
 * worker outage) is squeezed to a fixed width and labelled with its length, so one long pause
 * cannot shrink every attempt to a sliver. Given the stage's width, the axis spreads the whole run,
 * from its first start to its last end (or now, while something runs), over what the lane names
 * leave of it: a fit shows every bar. Lane names are pinned: they stay in view while panning.
 */
import { criticalPath } from "./critical-path.js";
import { FONTS, fitText, textWidth } from "./labels.js";
import { cubic, emptyBounds, finishBounds, include } from "./scene.js";
import { SIZE } from "./theme.js";

const TICK_STEPS_S = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
const MIN_TICK_GAP = 110;
const QUEUED_W = 28;
const IDLE_W = 48;
/** Lane names take at most this share of the stage's width, and at least GUTTER_MIN px. */
const GUTTER_SHARE = 0.34;
const GUTTER_MIN = 80;
/** What the scene keeps right of the axis: the queued column and the bounds' padding. */
const AXIS_TAIL = QUEUED_W + 16 + 24 + 24;

/**
 * @param {import("./model.js").Model} model
 * @param {{width?: number, now?: number}} [options]  `width`: the stage's, in CSS px, to spread the
 *   run over (none: the axis keeps the median attempt about 70 px wide); `now`: the clock of a live run
 * @returns {import("./scene.js").Scene & {gutter: number}}  `gutter`: the lane names' width, left of x = 0
 */
export function timelineScene(model, { width: stageWidth, now = Date.now() } = {}) {
  const timed = model.attempts.map((attempt) => ({
    attempt,
    start: attempt.started_at ? Date.parse(attempt.started_at) : NaN,
    // A running attempt runs until now: a live run's fit reaches the present.
    end: attempt.finished_at ? Date.parse(attempt.finished_at) : attempt.status === "running" && attempt.started_at ? now : NaN,
  }));
  const starts = timed.filter((item) => !Number.isNaN(item.start));
  const t0 = starts.length ? Math.min(...starts.map((item) => item.start)) : 0;
  const t1 = Math.max(t0 + 1000, ...starts.map((item) => (Number.isNaN(item.end) ? item.start : item.end)));
  const lanes = laneOrder(model, timed);
  const names = new Map([...lanes.keys()].map((nodeId) => {
    const node = model.nodes.get(nodeId);
    return [nodeId, `${node.label || nodeId} · ${node.org_node}`];
  }));
  const gutter = laneGutter([...names.values()], stageWidth);
  let scale = pixelsPerMs(starts, t1);
  let axis = timeAxis(starts, t0, t1, scale);
  if (stageWidth) {
    // Spread (or squeeze) the busy stretches so the axis takes what the lane names leave.
    const room = Math.max(120, stageWidth - gutter - AXIS_TAIL);
    const idle = axis.pieces.filter((piece) => piece.idle).length * IDLE_W;
    scale *= Math.max(1, room - idle) / Math.max(1, axis.toX(t1) - idle);
    axis = timeAxis(starts, t0, t1, scale);
  }
  const width = axis.toX(t1);

  const bounds = emptyBounds();
  include(bounds, -gutter, -30, width + gutter + QUEUED_W + 40, lanes.size * SIZE.lane + 30);
  const bands = [];
  const texts = [];
  for (const [nodeId, lane] of lanes) {
    if (lane % 2 === 0) bands.push({ x: 0, y: lane * SIZE.lane, w: width + QUEUED_W + 24, h: SIZE.lane, label: "" });
    const text = fitText(names.get(nodeId), FONTS.lane, gutter - 14);
    texts.push({ x: -10, y: lane * SIZE.lane + SIZE.lane / 2 + 4, text, role: "lane", align: "right", pinned: true });
  }

  const critical = new Set(criticalPath(model.attempts, (id) => waitedOn(model, id)));
  const boxes = [];
  const byExec = new Map();
  for (const item of timed) {
    const lane = lanes.get(item.attempt.node_id);
    const queued = Number.isNaN(item.start);
    const x = queued ? width + 16 : axis.toX(item.start);
    const end = Number.isNaN(item.end) ? t1 : item.end;
    const w = queued ? QUEUED_W : Math.max(6, axis.toX(end) - x);
    const box = {
      id: item.attempt.node_id,
      kind: "attempt",
      x,
      y: lane * SIZE.lane + (SIZE.lane - SIZE.attempt) / 2,
      w,
      h: SIZE.attempt,
      node: model.nodes.get(item.attempt.node_id),
      attempt: item.attempt,
      critical: critical.has(item.attempt.node_exec_id),
    };
    boxes.push(box);
    byExec.set(item.attempt.node_exec_id, { box, ...item });
  }
  return {
    bounds: finishBounds(bounds, 24),
    bands,
    links: [...ticks(axis, scale, lanes.size, texts), ...causeLinks(timed, byExec)],
    boxes,
    texts,
    gutter,
  };
}

/** The lane names' width: the widest name, within GUTTER_SHARE of the stage (when known). */
function laneGutter(names, stageWidth) {
  const widest = Math.max(0, ...names.map((name) => textWidth(name, FONTS.lane))) + 24;
  const cap = stageWidth ? Math.max(GUTTER_MIN, stageWidth * GUTTER_SHARE) : 260;
  return Math.ceil(Math.min(cap, Math.max(GUTTER_MIN, widest)));
}

/**
 * What a node waited on before it could start: its dependencies and the planning calls that made it;
 * a planning call (an appended stage) waits on the nodes planned before it.
 */
function waitedOn(model, nodeId) {
  if (model.planning.includes(nodeId)) return model.order;
  return [...(model.nodes.get(nodeId)?.depends_on || []), ...model.planning];
}

/**
 * Keeps the median attempt about 70 px wide, with the busy time (when something ran; idle gaps
 * are squeezed anyway) 800 to 40,000 px wide.
 */
function pixelsPerMs(starts, t1) {
  const durations = starts
    .filter((item) => !Number.isNaN(item.end))
    .map((item) => item.end - item.start)
    .sort((a, b) => a - b);
  let busy = 0;
  let reach = -Infinity;
  for (const [start, end] of starts.map((item) => [item.start, Number.isNaN(item.end) ? t1 : item.end]).sort((a, b) => a[0] - b[0])) {
    busy += Math.max(0, end - Math.max(start, reach));
    reach = Math.max(reach, end);
  }
  busy = Math.max(busy, 1000);
  const median = durations.length ? Math.max(1000, durations[durations.length >> 1]) : busy / 20;
  return Math.min(40000 / busy, Math.max(800 / busy, 70 / median));
}

/** @returns {Map<string, number>} node id → lane index, by first start (never-started last). */
function laneOrder(model, timed) {
  const first = new Map();
  for (const item of timed) {
    const start = Number.isNaN(item.start) ? Infinity : item.start;
    const id = item.attempt.node_id;
    if (!first.has(id) || start < first.get(id)) first.set(id, start);
  }
  const manifestIndex = new Map([...model.planning, ...model.order].map((id, index) => [id, index]));
  const ids = [...first.keys()].sort((a, b) => first.get(a) - first.get(b) || manifestIndex.get(a) - manifestIndex.get(b));
  return new Map(ids.map((id, lane) => [id, lane]));
}

/**
 * Piecewise-linear time → x: busy stretches at `scale`, idle gaps longer than a few median attempts
 * squeezed to IDLE_W px.
 * @returns {{toX: (t: number) => number, pieces: {t0: number, t1: number, x0: number, idle: boolean}[]}}
 */
function timeAxis(starts, t0, t1, scale) {
  const spans = starts
    .map((item) => [item.start, Number.isNaN(item.end) ? t1 : item.end])
    .sort((a, b) => a[0] - b[0]);
  const idleAfter = Math.max(120_000, 6 * (MIN_TICK_GAP / scale));
  const pieces = [];
  let x = 0;
  let cursor = t0;
  let reach = t0;
  for (const [start, end] of spans) {
    if (start - reach > idleAfter) {
      pieces.push({ t0: cursor, t1: reach, x0: x, idle: false });
      x += (reach - cursor) * scale;
      pieces.push({ t0: reach, t1: start, x0: x, idle: true });
      x += IDLE_W;
      cursor = start;
    }
    reach = Math.max(reach, end);
  }
  pieces.push({ t0: cursor, t1: Math.max(t1, cursor), x0: x, idle: false });
  const toX = (t) => {
    let low = 0;
    let high = pieces.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (pieces[mid].t0 <= t) low = mid;
      else high = mid - 1;
    }
    const piece = pieces[low];
    if (!piece.idle) return piece.x0 + (t - piece.t0) * scale;
    return piece.x0 + (IDLE_W * (t - piece.t0)) / Math.max(1, piece.t1 - piece.t0);
  };
  return { toX, pieces };
}

function ticks(axis, scale, laneCount, texts) {
  const stepS = TICK_STEPS_S.find((step) => step * 1000 * scale >= MIN_TICK_GAP) || TICK_STEPS_S.at(-1);
  const step = stepS * 1000;
  const bottom = laneCount * SIZE.lane;
  const links = [];
  for (const piece of axis.pieces) {
    if (piece.idle) {
      const x = piece.x0 + IDLE_W / 2;
      texts.push({ x, y: -12, text: `⋯ ${duration(piece.t1 - piece.t0)}`, role: "tick", align: "center" });
      links.push({ style: "grid", d: `M${piece.x0},-6L${piece.x0},${bottom}M${piece.x0 + IDLE_W},-6L${piece.x0 + IDLE_W},${bottom}`, arrow: null });
      continue;
    }
    // Ticks keep clear of an idle gap's label.
    const left = piece.x0 === 0 ? -1 : piece.x0 + MIN_TICK_GAP / 2;
    const right = piece === axis.pieces.at(-1) ? Infinity : axis.toX(piece.t1) - MIN_TICK_GAP / 2;
    for (let t = Math.ceil(piece.t0 / step) * step; t <= piece.t1; t += step) {
      const x = axis.toX(t);
      if (x < left || x > right) continue;
      links.push({ style: "grid", d: `M${x},-6L${x},${bottom}`, arrow: null });
      texts.push({ x, y: -12, text: clock(new Date(t), stepS < 60), role: "tick", align: "center" });
    }
  }
  return links;
}

function duration(ms) {
  const minutes = Math.round(ms / 60_000);
  return minutes >= 120 ? `${Math.round(minutes / 60)} h idle` : `${minutes} min idle`;
}

function clock(date, withSeconds) {
  const pad = (value) => String(value).padStart(2, "0");
  const hm = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return withSeconds ? `${hm}:${pad(date.getSeconds())}` : hm;
}

/** Arrows from the attempt that caused each retry or loop-back to the attempt it caused. */
function causeLinks(timed, byExec) {
  const byNode = new Map();
  for (const item of timed) {
    if (!byNode.has(item.attempt.node_id)) byNode.set(item.attempt.node_id, []);
    byNode.get(item.attempt.node_id).push(item);
  }
  for (const list of byNode.values()) list.sort((a, b) => a.attempt.attempt - b.attempt.attempt);
  const links = [];
  for (const item of timed) {
    const { cause, cause_node_id: causeNode, node_id: nodeId, attempt: number } = item.attempt;
    let origin = null;
    let style = "retry";
    if (cause === "retry_self" || cause === "transient_retry") {
      origin = (byNode.get(nodeId) || []).find((other) => other.attempt.attempt === number - 1);
    } else if ((cause === "loop_back" || cause === "dynamic_loop_back") && causeNode) {
      origin = latestBefore(byNode.get(causeNode) || [], item.start, item.attempt);
      style = "on_failure";
    }
    if (!origin) continue;
    links.push(causeArrow(byExec.get(origin.attempt.node_exec_id).box, byExec.get(item.attempt.node_exec_id).box, style));
  }
  return links;
}

/** The cause node's attempt that finished last before `start` (the one whose failure looped back). */
function latestBefore(attempts, start, self) {
  let best = null;
  for (const other of attempts) {
    if (other.attempt === self) continue;
    const moment = Number.isNaN(other.end) ? other.start : other.end;
    if (Number.isNaN(moment) || (!Number.isNaN(start) && moment > start)) continue;
    if (!best || moment >= (Number.isNaN(best.end) ? best.start : best.end)) best = other;
  }
  return best;
}

function causeArrow(from, to, style) {
  const sx = from.x + from.w;
  const sy = from.y + from.h / 2;
  const ex = to.x;
  const ey = to.y + to.h / 2;
  if (Math.abs(sy - ey) < 1) {
    // Same lane: hop over the gap so even back-to-back attempts show the arrow.
    const lift = SIZE.attempt * 0.9;
    const path = cubic(sx, sy - 4, sx + 6, sy - lift, ex - 6, ey - lift, ex, ey - 4);
    return { style, d: path.d, arrow: path.arrow };
  }
  const reach = Math.max(24, Math.abs(ex - sx) / 2);
  const path = cubic(sx, sy, sx + reach, sy, ex - reach, ey, ex, ey);
  return { style, d: path.d, arrow: path.arrow };
}
