/**
 * The legend, built from the same theme tables the renderers use. A <details> that starts closed:
 * open, it sits over the drawing's corner, where it would hide nodes nobody asked it to cover.
 */
import { CRITICAL, LINK, PLANNING, STATUS } from "./theme.js";
import { statusWords } from "../status-vocabulary.js";

const NS = "http://www.w3.org/2000/svg";

function item(list, swatch, text) {
  const entry = document.createElement("li");
  entry.append(swatch, document.createTextNode(text));
  list.appendChild(entry);
}

function statusSwatch(style) {
  const swatch = document.createElement("span");
  swatch.className = "dag-legend__swatch";
  swatch.style.background = style.fill;
  swatch.style.borderColor = style.stroke;
  swatch.style.color = style.text;
  swatch.textContent = style.glyph;
  return swatch;
}

function lineSwatch(spec, curved) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("class", "dag-legend__line");
  svg.setAttribute("viewBox", "0 0 36 14");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(NS, "path");
  path.setAttribute("d", curved ? "M2,12 C14,-2 22,-2 30,10" : "M2,7 L30,7");
  path.setAttribute("fill", "none");
  path.setAttribute("stroke", spec.color);
  path.setAttribute("stroke-width", String(spec.width));
  if (spec.dash.length) path.setAttribute("stroke-dasharray", spec.dash.map((value) => value * 0.6).join(" "));
  const head = document.createElementNS(NS, "path");
  head.setAttribute("d", curved ? "M34,13 L27,11 L31,6 Z" : "M35,7 L29,3.5 L29,10.5 Z");
  head.setAttribute("fill", spec.color);
  svg.append(path, head);
  return svg;
}

function chip(className, text, colors = {}) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  Object.assign(element.style, colors);
  return element;
}

/** @returns {HTMLDetailsElement} */
export function createLegend() {
  const details = document.createElement("details");
  details.className = "dag-legend";
  const summary = document.createElement("summary");
  summary.textContent = "Legend";
  const statuses = document.createElement("ul");
  for (const [status, style] of Object.entries(STATUS)) item(statuses, statusSwatch(style), statusWords(status));
  const links = document.createElement("ul");
  for (const [name, spec] of Object.entries(LINK)) {
    if (spec.label) item(links, lineSwatch(spec, name === "on_failure"), spec.label);
  }
  const marks = document.createElement("ul");
  item(marks, chip("dag-legend__badge", "×3"), "attempts (from the 2nd)");
  item(marks, chip("dag-legend__org", "coder"), "org node");
  item(marks, chip("dag-legend__planning", "◦", { background: PLANNING.fill, borderColor: PLANNING.stroke }), "planning call");
  item(marks, chip("dag-legend__critical", "", { borderBottomColor: CRITICAL }), "critical path (as it ran)");
  item(marks, chip("dag-legend__org", "✕", { borderColor: "#7f1d1d", borderWidth: "2px" }), "root cause: failed, nothing failed upstream");
  item(marks, chip("dag-legend__org", "⊘", { borderStyle: "dashed" }), "failed or blocked because of a root cause");
  details.append(summary, statuses, links, marks);
  return details;
}
