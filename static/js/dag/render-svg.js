/**
 * SVG renderer, for scenes small enough that a DOM element per box is cheap. Boxes are focusable
 * buttons (Tab, Enter) with an accessible name, which the canvas renderer cannot offer; pan and
 * zoom only rewrite one transform attribute.
 */
import { boxParts } from "./box-parts.js";
import { FONTS, boxAriaLabel, firedLabel, textWidth } from "./labels.js";
import { LINK, sceneInks } from "./theme.js";

const NS = "http://www.w3.org/2000/svg";
let instances = 0;

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    // The page's Content-Security-Policy refuses style attributes; styles set through the CSSOM pass.
    if (key === "style") node.style.cssText = String(value);
    else node.setAttribute(key, String(value));
  }
  if (parent) parent.appendChild(node);
  return node;
}

function drawParts(group, parts) {
  for (const part of parts) {
    if (part.t === "rect") {
      el("rect", {
        x: part.x, y: part.y, width: part.w, height: part.h, rx: part.r,
        fill: part.fill || "none", stroke: part.stroke, "stroke-width": part.stroke ? part.lw || 1 : undefined,
        "stroke-dasharray": part.dash ? part.dash.join(" ") : undefined,
      }, group);
    } else {
      const anchor = { center: "middle", right: "end" }[part.align] || "start";
      const text = el("text", {
        x: part.x, y: part.y, fill: part.color, "text-anchor": anchor, style: `font: ${part.font}`,
        class: part.title ? "dag-title" : part.cls,
      }, group);
      text.textContent = part.text;
      // Server-written words, set as text: a tooltip never parses markup.
      if (part.tip) el("title", {}, text).textContent = part.tip;
    }
  }
}

/**
 * @param {HTMLElement} host
 * @returns {import("./render-canvas.js").Renderer}
 */
export function createSvgRenderer(host) {
  const uid = ++instances;
  const svg = el("svg", { class: "dag-surface dag-svg", role: "group" });
  const defs = el("defs", {}, svg);
  for (const [style, spec] of Object.entries(LINK)) {
    const marker = el("marker", {
      id: `dag-arrow-${uid}-${style}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 8 + spec.width * 2, markerHeight: 8 + spec.width * 2, markerUnits: "userSpaceOnUse", orient: "auto",
    }, defs);
    el("path", { d: "M0,0L10,5L0,10z", fill: spec.color }, marker);
  }
  const viewport = el("g", {}, svg);
  // Pinned texts (the timeline's lane names) follow the drawing up and down but stay in view sideways.
  const pinLayer = el("g", { class: "dag-pinned" }, svg);
  host.appendChild(svg);
  /** @type {{box: object, group: SVGGElement}[]} */
  let boxes = [];
  /** @type {{link: object, text: SVGTextElement, pill: SVGRectElement}[]} */
  let arcLabels = [];
  let scene = null;

  function setScene(next) {
    scene = next;
    // A redrawn scene keeps the keyboard where it was: on the box of the same node.
    const focusedId = boxes.find((entry) => entry.group === document.activeElement)?.box.id;
    const inks = sceneInks(host);
    viewport.replaceChildren();
    pinLayer.replaceChildren();
    const pinned = scene.texts.filter((text) => text.pinned);
    if (pinned.length) {
      const top = Math.min(...pinned.map((text) => text.y)) - 20;
      const bottom = Math.max(...pinned.map((text) => text.y)) + 12;
      el("rect", { x: -scene.gutter, y: top, width: scene.gutter - 2, height: bottom - top, fill: inks.halo, class: "dag-pin-backdrop" }, pinLayer);
    }
    const bandLayer = el("g", { class: "dag-bands" }, viewport);
    for (const band of scene.bands) {
      el("rect", { x: band.x, y: band.y, width: band.w, height: band.h, rx: 12, fill: inks.bandFill, stroke: band.label ? inks.bandStroke : "none" }, bandLayer);
    }
    const linkLayer = el("g", { class: "dag-links", fill: "none" }, viewport);
    const textLayer = el("g", { class: "dag-texts" }, viewport);
    const boxLayer = el("g", { class: "dag-boxes" }, viewport);
    // Loop-backs go over the boxes: an arc hidden under a node would seem to start from it.
    const loopLayer = el("g", { class: "dag-loops", fill: "none" }, viewport);
    for (const link of scene.links) {
      const spec = LINK[link.style];
      el("path", {
        d: link.d, stroke: link.style === "grid" ? inks.grid : spec.color, "stroke-width": spec.width,
        "stroke-dasharray": spec.dash.length ? spec.dash.join(" ") : undefined,
        "marker-end": link.arrow ? `url(#dag-arrow-${uid}-${link.style})` : undefined,
        class: `dag-link dag-link--${link.style}`,
      }, link.style === "on_failure" ? loopLayer : linkLayer);
    }
    for (const text of scene.texts) {
      const anchor = { center: "middle", right: "end" }[text.align] || "start";
      el("text", {
        x: text.x, y: text.y, fill: text.role === "band" ? inks.bandText : inks.text, "text-anchor": anchor,
        style: `font: ${FONTS[text.role]}`, class: text.pinned ? "dag-lane-name" : undefined,
      }, text.pinned ? pinLayer : textLayer).textContent = text.text;
    }
    arcLabels = scene.links.filter((link) => link.labelAt).map((link) => {
      const group = el("g", { class: "dag-arc-label" }, loopLayer);
      const pill = el("rect", { y: link.labelAt[1] - 10, height: 20, rx: 10, fill: "#ffffff", stroke: LINK.on_failure.color, "stroke-width": 1.5 }, group);
      const text = el("text", { x: link.labelAt[0], y: link.labelAt[1] + 4, fill: "#991b1b", "text-anchor": "middle", style: `font: ${FONTS.arc}` }, group);
      return { link, pill, text };
    });
    boxes = scene.boxes.map((box) => {
      const group = el("g", {
        class: `dag-box dag-box--${box.kind}`, transform: `translate(${box.x},${box.y})`,
        tabindex: 0, role: "button", "data-node-id": box.id,
      }, boxLayer);
      return { box, group };
    });
    refresh();
    if (focusedId !== undefined) boxes.find((entry) => entry.box.id === focusedId)?.group.focus({ preventScroll: true });
  }

  /** Redraws what live updates change: box contents and loop-back counts. */
  function refresh() {
    for (const { box, group } of boxes) {
      group.replaceChildren();
      drawParts(group, boxParts(box));
      group.setAttribute("aria-label", boxAriaLabel(box));
      if (box.node) group.dataset.status = (box.attempt || box.node).status;
      if (box.critical) group.dataset.critical = "true";
      const role = box.kind === "node" ? box.node.failure_role?.role : undefined;
      group.classList.toggle("dag-box--root-cause", role === "root_cause");
      group.classList.toggle("dag-box--failed-because", role === "failed_downstream" || role === "blocked");
    }
    for (const { link, pill, text } of arcLabels) {
      const label = firedLabel(link.edge);
      const width = textWidth(label, FONTS.arc) + 14;
      text.textContent = label;
      pill.setAttribute("x", String(link.labelAt[0] - width / 2));
      pill.setAttribute("width", String(width));
      pill.setAttribute("opacity", link.edge.fired ? "1" : "0.75");
    }
  }

  return {
    element: svg,
    setScene,
    refresh,
    /** @param {{scale: number, tx: number, ty: number}} t */
    setTransform(t) {
      viewport.setAttribute("transform", `translate(${t.tx},${t.ty}) scale(${t.scale})`);
      const left = scene && scene.gutter ? Math.max(t.tx, scene.gutter * t.scale) : t.tx;
      pinLayer.setAttribute("transform", `translate(${left},${t.ty}) scale(${t.scale})`);
    },
    /** @returns {number} the zoom text is drawn at: SVG scales every text with the drawing */
    labelScale: (scale) => scale,
    /** @returns {object | null} the scene box under a pointer event */
    pick(event) {
      const group = event.target instanceof Element ? event.target.closest(".dag-box") : null;
      if (!group) return null;
      const found = boxes.find((entry) => entry.group === group);
      return found ? found.box : null;
    },
    /** @returns {object | null} the focused box, for keyboard activation */
    focused() {
      const found = boxes.find((entry) => entry.group === document.activeElement);
      return found ? found.box : null;
    },
    destroy() {
      svg.remove();
    },
  };
}
