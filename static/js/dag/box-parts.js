/**
 * A box's drawing as a short list of primitives in box-local coordinates, so the SVG and canvas
 * renderers draw identical boxes from one definition.
 *
 * @typedef {{t: "rect", x: number, y: number, w: number, h: number, r: number, fill?: string,
 *            stroke?: string, lw?: number, dash?: number[]}} RectPart
 * @typedef {{t: "text", x: number, y: number, text: string, font: string, color: string,
 *            align?: CanvasTextAlign, title?: boolean, cls?: string, tip?: string}} TextPart
 *   `title`: the box's name (dag-title); `cls`: its class in SVG; `tip`: its SVG tooltip (the hover
 *   card, labels.js's boxFacts, says the same on a canvas)
 */
import { durationLabel } from "./critical-path.js";
import { failureRoleLabel } from "./failure-roles.js";
import {
  FONTS, attemptBadge, boxCostLabel, fitText, nodeTitle, shownTitle, statusLine, textWidth, toolFailures, toolFailuresTip,
} from "./labels.js";
import { CRITICAL, INK, MUTED_INK, PLANNING, statusStyle } from "./theme.js";

const PAD = 14;

/** The box's strong colour alone: what a zoomed-out canvas paints, without building the parts. */
export function boxTone(box) {
  if (box.kind === "planning") return PLANNING.stroke;
  if (box.kind === "group") return "#64748b";
  return statusStyle((box.attempt || box.node).status).stroke;
}

/**
 * @param {import("./scene.js").SceneBox} box
 * @returns {(RectPart|TextPart)[]}
 */
export function boxParts(box) {
  let parts;
  if (box.kind === "planning") parts = planningParts(box);
  else if (box.kind === "attempt") parts = attemptParts(box);
  else if (box.kind === "group") parts = groupParts(box);
  else parts = nodeParts(box);
  if (box.highlight) {
    const r = box.kind === "planning" ? box.h / 2 + 5 : 12;
    parts.unshift({ t: "rect", x: -5, y: -5, w: box.w + 10, h: box.h + 10, r, fill: "#fde68a", stroke: "#b45309", lw: 2 });
  }
  return parts;
}

function nodeParts(box) {
  const { w, h, node, titles } = box;
  const style = statusStyle(node.status);
  const role = node.failure_role;
  // A root cause is ringed; what failed or was blocked because of one is drawn dashed, so the eye
  // goes to the node to fix first.
  const parts = [
    { t: "rect", x: 0, y: 0, w, h, r: 8, fill: style.fill, stroke: style.stroke, lw: node.status === "running" ? 2.5 : 1.5,
      dash: role && role.role !== "root_cause" ? [5, 3] : undefined },
    { t: "rect", x: 4, y: 7, w: 4, h: h - 14, r: 2, fill: style.stroke },
  ];
  if (role?.role === "root_cause") parts.unshift({ t: "rect", x: -4, y: -4, w: w + 8, h: h + 8, r: 11, stroke: "#7f1d1d", lw: 2.5 });
  // The name has the top line to itself: a box is as wide as a 24-character name (theme.js's SIZE).
  parts.push({ t: "text", x: PAD, y: 20, text: shownTitle(titles, nodeTitle(node), FONTS.title, w - PAD - 8), font: FONTS.title, color: INK, title: true });
  // The bottom line, from the right: the org pill, the attempt badge, the failed-tools marker and the
  // cost, each whole; the status words take the room left, cut if they must.
  let right = w - 6;
  const pill = (text, font, fill, color, extra = {}) => {
    const pw = textWidth(text, font) + 10;
    right -= pw;
    parts.push({ t: "rect", x: right, y: h - 22, w: pw, h: 16, r: 8, fill, ...extra.rect });
    parts.push({ t: "text", x: right + pw / 2, y: h - 10, text, font, color, align: "center", ...extra.text });
    right -= 4;
  };
  const org = fitText(node.org_node || "", FONTS.meta, w / 2 - 16);
  if (org) pill(org, FONTS.meta, "#f1f5f9", MUTED_INK, { rect: { stroke: "#94a3b8", lw: 1 } });
  const badge = attemptBadge(node);
  if (badge) pill(badge, FONTS.badge, "#1e293b", "#ffffff");
  const failures = toolFailures(box);
  if (failures) {
    const tip = toolFailuresTip(failures);
    pill(`⚠ ${failures.count}`, FONTS.badge, "#fef3c7", "#92400e", { rect: { stroke: "#b45309", lw: 1 }, text: { tip, cls: "dag-tool-failures" } });
  }
  const cost = boxCostLabel(node);
  if (cost) {
    right -= textWidth(cost, FONTS.meta);
    parts.push({ t: "text", x: right, y: h - 10, text: cost, font: FONTS.meta, color: style.text, cls: "dag-cost" });
    right -= 6;
  }
  const line = [statusLine(node.status), failureRoleLabel(role)].filter(Boolean).join(" · ");
  parts.push({ t: "text", x: PAD, y: h - 10, text: fitText(line, FONTS.meta, right - PAD), font: FONTS.meta, color: style.text });
  return parts;
}

function planningParts({ w, h, node, titles }) {
  const style = statusStyle(node.status);
  return [
      { t: "rect", x: 0, y: 0, w, h, r: h / 2, fill: PLANNING.fill, stroke: PLANNING.stroke, lw: 1.5, dash: [4, 3] },
      { t: "rect", x: 10, y: h / 2 - 5, w: 10, h: 10, r: 5, fill: style.stroke },
      { t: "text", x: 26, y: h / 2 + 4.5, text: shownTitle(titles, nodeTitle(node), FONTS.title, w - 36), font: FONTS.title, color: PLANNING.text, title: true },
  ];
}

function attemptParts({ w, h, attempt, critical }) {
  const style = statusStyle(attempt.status);
  const parts = [
    { t: "rect", x: 0, y: 0, w, h, r: 4, fill: style.fill, stroke: style.stroke, lw: attempt.status === "running" ? 2 : 1.25, dash: attempt.started_at ? undefined : [3, 2] },
  ];
  // The critical path's bars carry a dark underline, legible over every status colour.
  if (critical) parts.push({ t: "rect", x: 1, y: h - 4, w: w - 2, h: 3, r: 1.5, fill: CRITICAL });
  // As much as fits: "#2 · 12.3 s", else "#2", else nothing.
  const number = `#${attempt.attempt}`;
  const took = durationLabel(attempt);
  const label = (took ? [`${number} · ${took}`, number] : [number]).find((text) => w >= textWidth(text, FONTS.badge) + 8);
  if (label) parts.push({ t: "text", x: w / 2, y: h / 2 + 4, text: label, font: FONTS.badge, color: style.text, align: "center" });
  return parts;
}

function groupParts({ w, h, title, summary }) {
  return [
      { t: "rect", x: 0, y: 0, w, h, r: 10, fill: "#f8fafc", stroke: "#64748b", lw: 1.5 },
      { t: "text", x: PAD, y: 26, text: fitText(title, FONTS.title, w - 2 * PAD), font: FONTS.title, color: INK, title: true },
      { t: "text", x: PAD, y: 48, text: fitText(summary, FONTS.meta, w - 2 * PAD), font: FONTS.meta, color: MUTED_INK },
      { t: "text", x: PAD, y: 68, text: "Click to draw this stage", font: FONTS.meta, color: "#1d4ed8" },
  ];
}
