/**
 * What a box says, shared by both renderers: titles, status lines, badges, accessible names, and
 * text fitted to a width. Agent-authored ids and labels only ever reach the page as text
 * (textContent, SVG text nodes, canvas fillText), never as markup.
 */
import { failureRoleLabel } from "./failure-roles.js";
import { FONT, statusStyle } from "./theme.js";

export const FONTS = {
  title: `600 13px ${FONT}`,
  meta: `11px ${FONT}`,
  badge: `600 11px ${FONT}`,
  band: `600 12px ${FONT}`,
  lane: `12px ${FONT}`,
  tick: `11px ${FONT}`,
  heading: `600 12px ${FONT}`,
  arc: `600 11px ${FONT}`,
};

/** @param {object} node @returns {string} */
export function nodeTitle(node) {
  return node.label || node.node_id;
}

/** @returns {string} e.g. "✓ succeeded" */
export function statusLine(status) {
  const style = statusStyle(status);
  return `${style.glyph} ${style.label}`;
}

/** What a node's attempts cost, for its box: "$0.21", "<$0.01", or "" when nothing was spent. */
export function costLabel(node) {
  const usd = node.cost_usd;
  if (typeof usd !== "number" || usd <= 0) return "";
  return usd < 0.01 ? "<$0.01" : `$${usd.toFixed(2)}`;
}

/** The attempt badge: shown from the second attempt on, when retries and loop-backs matter. */
export function attemptBadge(node) {
  return node.attempts > 1 ? `×${node.attempts}` : "";
}

/** @returns {string} the label of a loop-back arc */
export function firedLabel(edge) {
  return `↺ ${edge.fired}×`;
}

/** @param {import("./scene.js").SceneBox} box @returns {string} the box's accessible name */
export function boxAriaLabel(box) {
  if (box.kind === "group") return `${box.title}: ${box.summary}`;
  const node = box.node;
  if (box.kind === "attempt") {
    return `${nodeTitle(node)} attempt ${box.attempt.attempt}, ${statusStyle(box.attempt.status).label}, cause ${box.attempt.cause}`;
  }
  const attempts = `${node.attempts} attempt${node.attempts === 1 ? "" : "s"}`;
  const cost = costLabel(node) ? `, cost ${costLabel(node)}` : "";
  const role = failureRoleLabel(node.failure_role);
  return `${nodeTitle(node)}, ${statusStyle(node.status).label}${role ? ` (${role})` : ""}, ${attempts}${cost}, org node ${node.org_node}`;
}

let measure = null;
const fitted = new Map();

/** Text width in px for a canvas font string. */
export function textWidth(text, font) {
  measure ||= document.createElement("canvas").getContext("2d");
  measure.font = font;
  return measure.measureText(text).width;
}

/** `text`, shortened with an ellipsis until it fits `maxWidth` px in `font`. */
export function fitText(text, font, maxWidth) {
  const key = `${font}\u0000${maxWidth}\u0000${text}`;
  let result = fitted.get(key);
  if (result !== undefined) return result;
  result = text;
  if (textWidth(text, font) > maxWidth) {
    let low = 0;
    let high = text.length;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (textWidth(`${text.slice(0, mid)}…`, font) <= maxWidth) low = mid;
      else high = mid - 1;
    }
    result = `${text.slice(0, low)}…`;
  }
  if (fitted.size > 20000) fitted.clear();
  fitted.set(key, result);
  return result;
}
