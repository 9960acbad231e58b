/**
 * What a box says, shared by both renderers: titles, status lines, badges, accessible names, and
 * text fitted to a width. Agent-authored ids and labels only ever reach the page as text
 * (textContent, SVG text nodes, canvas fillText), never as markup.
 */
import { durationLabel } from "./critical-path.js";
import { failureRoleLabel } from "./failure-roles.js";
import { FONT, statusStyle } from "./theme.js";
import { statusWords } from "../status-vocabulary.js";
import { usdText } from "../money.js";
import { cutToFit, distinctCuts } from "./title-cuts.js";

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
  return `${statusStyle(status).glyph} ${statusWords(status)}`;
}

/**
 * What a node's (or an attempt's) calls cost, in the words of every page (money.js): "$0.2100",
 * "< $0.0001", or "" when nothing was spent or reported (a box says nothing of it).
 */
export function costLabel(node) {
  const usd = node.cost_usd;
  return typeof usd === "number" && usd > 0 ? usdText(usd) : "";
}

/**
 * What a node's calls cost as its box says it, in whole cents so it is never cut: "$0.41", "< $0.01"
 * for less than a cent, "" when nothing was spent or reported. The hover card and the accessible
 * name keep every page's four decimals (costLabel).
 */
export function boxCostLabel(node) {
  const usd = node.cost_usd;
  if (typeof usd !== "number" || usd <= 0) return "";
  return usd < 0.005 ? "< $0.01" : `$${usd.toFixed(2)}`;
}

/**
 * The failed tool calls of a node's latest attempt, as graph.json's `tool_failures` says them
 * (`{count, first, words}`, server-written), or null when none failed.
 * @param {{node: object, attempts?: Map<string, object>}} box
 */
export function toolFailures(box) {
  const latest = box.attempts && box.node ? box.attempts.get(box.node.latest_exec_id) : null;
  const failures = latest && latest.tool_failures;
  return failures && failures.count > 0 ? failures : null;
}

/** @returns {string} the words of a tool-failure marker's tooltip: the server's sentence, then the first error */
export function toolFailuresTip(failures) {
  return [failures.words, failures.first].filter(Boolean).join(": ");
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
    return `${nodeTitle(node)} attempt ${box.attempt.attempt}, ${statusWords(box.attempt.status)}, cause ${box.attempt.cause}`;
  }
  const attempts = `${node.attempts} attempt${node.attempts === 1 ? "" : "s"}`;
  const cost = costLabel(node) ? `, cost ${costLabel(node)}` : "";
  const role = failureRoleLabel(node.failure_role);
  return `${nodeTitle(node)}, ${statusWords(node.status)}${role ? ` (${role})` : ""}, ${attempts}${cost}, org node ${node.org_node}`;
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
  result = cutToFit(text, maxWidth, (candidate) => textWidth(candidate, font));
  if (fitted.size > 20000) fitted.clear();
  fitted.set(key, result);
  return result;
}

/**
 * The titles of a scene's boxes, for `shownTitle`: every name, and their cuts per font and width.
 * @param {string[]} names
 */
export function titleSet(names) {
  return { names, cuts: new Map() };
}

/**
 * `name` as drawn in `maxWidth` px of `font`: cut to fit, and never reading the same as another
 * name of `titles` cut to that width (title-cuts.js).
 * @param {ReturnType<typeof titleSet> | undefined} titles
 */
export function shownTitle(titles, name, font, maxWidth) {
  if (!titles) return fitText(name, font, maxWidth);
  const key = `${font}\u0000${maxWidth}`;
  let cuts = titles.cuts.get(key);
  if (!cuts) {
    cuts = distinctCuts(titles.names, maxWidth, (candidate) => textWidth(candidate, font));
    titles.cuts.set(key, cuts);
  }
  return cuts.get(name) ?? fitText(name, font, maxWidth);
}

/**
 * What hovering a box tells, one fact a line: a node's full name and state; an attempt's node,
 * number, cause, duration and cost.
 * @param {import("./scene.js").SceneBox} box
 * @returns {string[]}
 */
export function boxFacts(box) {
  if (box.kind === "group") return [box.title, box.summary];
  const node = box.node;
  const name = nodeTitle(node);
  const lines = [name];
  if (name !== node.node_id) lines.push(`id ${node.node_id}`);
  if (box.kind === "attempt") {
    const attempt = box.attempt;
    const from = attempt.cause_node_id ? ` (from ${attempt.cause_node_id})` : "";
    lines.push(`Attempt ${attempt.attempt} · ${statusLine(attempt.status)}`);
    lines.push(`Cause: ${(attempt.cause || "initial").replaceAll("_", " ")}${from}`);
    lines.push(`Took: ${durationLabel(attempt) || "not started"}`);
    lines.push(`Cost: ${typeof attempt.cost_usd === "number" ? usdText(attempt.cost_usd) : "not reported"}`);
    return lines;
  }
  const role = failureRoleLabel(node.failure_role);
  lines.push(`${statusLine(node.status)}${role ? ` · ${role}` : ""}`);
  const attempts = `${node.attempts} attempt${node.attempts === 1 ? "" : "s"}`;
  lines.push([attempts, costLabel(node), node.org_node ? `org node ${node.org_node}` : ""].filter(Boolean).join(" · "));
  const failures = toolFailures(box);
  if (failures) lines.push(toolFailuresTip(failures));
  return lines;
}
