/**
 * What of the run graph is on screen: the scene each view (graph, timeline) shows, the renderer that
 * draws it (SVG when small, canvas when large), pan and zoom, and following the drawing as it grows:
 * a view the user has not moved is fitted again, one they moved stays put and is told of new nodes.
 * A tap, Enter or Space on a box is handed to `onActivate`; hovering one shows its facts.
 *
 * The graph is never fitted smaller than its node names stay legible (legibility.js): one too big
 * for that opens at a legible zoom on its active or first nodes, the toolbar says so, and a minimap
 * shows where the view is. The container's `data-min-label-px` is the on-screen height, in CSS px, of
 * the smallest node title drawn (lane names in the timeline; 0 when none is), kept current.
 */
import { LANE_PX, LEGIBLE_PX, TITLE_PX, fitTransform, focusRect, labelPx, wholeScale } from "./legibility.js";
import { createMinimap } from "./minimap.js";
import { createCanvasRenderer } from "./render-canvas.js";
import { createSvgRenderer } from "./render-svg.js";
import { createTooltip } from "./tooltip.js";
import { createViewport } from "./viewport.js";

/** Scenes with more boxes than this go to the canvas renderer. */
const SVG_MAX_BOXES = 400;

/**
 * @param {HTMLElement} container
 * @param {ReturnType<import("./run-graph-chrome.js").buildChrome>} ui
 * @param {object} handlers
 * @param {(box: object | null) => void} handlers.onActivate  called with the box tapped or activated, or null
 * @param {(name: string, width: number) => object | null} [handlers.refitScene]  a scene drawn anew for
 *   a fit into the stage, `width` px wide (the timeline spreads the run over the stage's width, a small
 *   graph wraps to the stage), or null to keep it
 */
export function createScreen(container, ui, { onActivate, refitScene = () => null }) {
  // `fitted` is the transform of the view's last automatic fit: while the view still has it, the
  // user has not panned or zoomed since, and the drawing keeps being fitted as it grows or resizes.
  const views = {
    graph: { scene: null, transform: null, fitted: null },
    timeline: { scene: null, transform: null, fitted: null },
  };
  let view = "graph";
  let renderer = null;
  let rendererKind = "";

  const minimap = createMinimap(ui.stage, {
    onMove: (x, y) => {
      const { scale } = viewport.transform;
      viewport.set({ scale, tx: ui.stage.clientWidth / 2 - x * scale, ty: ui.stage.clientHeight / 2 - y * scale });
    },
  });
  const tooltip = createTooltip(ui.stage);
  const viewport = createViewport(ui.stage, {
    onChange: (t) => {
      views[view].transform = t;
      if (renderer) renderer.setTransform(t);
      tooltip.hide();
      onViewChanged();
    },
    onTap: (event, world) => onActivate(renderer && renderer.pick(event, world)),
    onFitKey: () => fit(),
  });
  ui.stage.addEventListener("keydown", (event) => {
    if ((event.key === "Enter" || event.key === " ") && renderer && renderer.focused()) {
      event.preventDefault();
      onActivate(renderer.focused());
    }
  });
  ui.zoomIn.addEventListener("click", () => viewport.zoom(1.25));
  ui.zoomOut.addEventListener("click", () => viewport.zoom(0.8));
  ui.fitButton.addEventListener("click", () => fit());
  ui.newNodes.addEventListener("click", () => fit());
  // The side panel opening, a phone turning or a window resized change the stage's size: a view the
  // user has not moved is fitted again, one they have moved is left where they put it.
  const resizes = new ResizeObserver(() => {
    const scene = views[view].scene;
    if (scene && !userMoved(view)) refitView();
    else onViewChanged();
  });
  resizes.observe(ui.stage);
  ui.stage.addEventListener("pointermove", (event) => {
    if (!renderer || event.buttons || event.target === minimap.element) {
      tooltip.hide();
      return;
    }
    const rect = ui.stage.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const t = viewport.transform;
    tooltip.show(renderer.pick(event, { x: (x - t.tx) / t.scale, y: (y - t.ty) / t.scale }), x, y);
  });
  ui.stage.addEventListener("pointerleave", () => tooltip.hide());
  // A box focused from the keyboard shows its facts too (SVG boxes are focusable).
  ui.stage.addEventListener("focusin", () => {
    const box = renderer && renderer.focused();
    if (!box) return;
    const t = viewport.transform;
    tooltip.show(box, box.x * t.scale + t.tx, (box.y + box.h) * t.scale + t.ty);
  });
  ui.stage.addEventListener("focusout", () => tooltip.hide());

  /** Puts a scene on screen, switching renderer when its size calls for the other one. */
  function show(name, scene, { refit }) {
    views[name].scene = scene;
    if (name !== view) {
      // Fitted when next shown: a transform kept from an earlier scene would frame this one wrongly.
      if (refit) views[name].transform = null;
      return;
    }
    const kind = scene.boxes.length <= SVG_MAX_BOXES ? "svg" : "canvas";
    if (kind !== rendererKind) {
      if (renderer) renderer.destroy();
      renderer = kind === "svg" ? createSvgRenderer(ui.stage) : createCanvasRenderer(ui.stage);
      rendererKind = kind;
    }
    // Framed before the scene is built: fitting reads the stage's size, which, once a new drawing is
    // in the document, makes the browser lay all of it out there and then (at 100 SVG boxes, tens of
    // milliseconds), and again once the frame is moved.
    const saved = views[name].transform;
    if (refit || !saved) fitScene(name, scene);
    else viewport.set(saved);
    renderer.setScene(scene);
    minimap.setScene(name === "graph" ? scene : null);
    onViewChanged();
  }

  /**
   * Frames a scene: the timeline whole across the stage (legible lanes from its top), the graph
   * whole when its names stay legible, else legible on its active or first nodes.
   */
  function fitScene(name, scene) {
    const width = ui.stage.clientWidth || 1;
    const height = ui.stage.clientHeight || 1;
    let whole = true;
    if (name === "timeline") {
      viewport.fit(scene.bounds, { readable: true });
    } else {
      const nodes = scene.boxes.map((box) => ({ ...box, status: box.node ? box.node.status : undefined }));
      const t = fitTransform(scene.bounds, width, height, { focus: focusRect(nodes) });
      viewport.fitTo(t, wholeScale(scene.bounds, width, height));
      whole = t.whole;
    }
    views[name].fitted = views[name].transform;
    ui.fitNote.hidden = whole;
    ui.fitNote.textContent = whole ? "" : "Too large to fit legibly: showing its start. Drag, or use the minimap.";
    container.dataset.fit = whole ? "whole" : "legible";
  }

  /** Fits the view on screen again, drawing its scene anew first when it depends on the stage's width. */
  function refitView() {
    const fresh = refitScene(view, ui.stage.clientWidth || 1);
    if (fresh) views[view].scene = fresh;
    fitScene(view, views[view].scene);
    if (!fresh) return;
    if (renderer) renderer.setScene(fresh);
    if (view === "graph") minimap.setScene(fresh);
  }

  /** After any change of the view: the minimap's outline and `data-min-label-px`. */
  function onViewChanged() {
    const t = viewport.transform;
    const width = ui.stage.clientWidth;
    const height = ui.stage.clientHeight;
    if (view === "graph") minimap.setView(t, width, height);
    else minimap.hide();
    const scene = views[view].scene;
    if (!scene || !renderer) return;
    const px = String(labelPx(view === "timeline" ? LANE_PX : TITLE_PX, renderer.labelScale(t.scale)));
    // Written only when it changes: a pan frame must not invalidate the page's styles.
    if (container.dataset.minLabelPx !== px) {
      container.dataset.minLabelPx = px;
      container.dataset.legible = String(Number(px) >= LEGIBLE_PX);
    }
  }

  /** Whether the user panned or zoomed `name` since it was last fitted. */
  function userMoved(name) {
    return views[name].transform !== null && views[name].transform !== views[name].fitted;
  }

  /** Shows (or, with 0, hides) the "n new nodes" hint of appended nodes that are not in view. */
  function hintNewNodes(count) {
    const total = count ? Number(ui.newNodes.dataset.count || 0) + count : 0;
    ui.newNodes.dataset.count = String(total);
    ui.newNodes.textContent = `${total} new node${total === 1 ? "" : "s"} · fit`;
    ui.newNodes.hidden = total === 0;
  }

  /** Fits the current view's drawing into the container; it follows the run's growth again. */
  function fit() {
    if (views[view].scene) refitView();
    hintNewNodes(0);
  }

  /**
   * Makes `name` the view on screen, as far as the toolbar and the container say; drawing it is the
   * caller's. False when there is no such view or it is already the one.
   * @param {"graph" | "timeline"} name
   */
  function switchTo(name) {
    if (!views[name] || name === view) return false;
    view = name;
    ui.graphButton.setAttribute("aria-pressed", String(name === "graph"));
    ui.timelineButton.setAttribute("aria-pressed", String(name === "timeline"));
    container.dataset.view = name;
    tooltip.hide();
    return true;
  }

  /** Redraws the scene on screen after its model changed in place. */
  function refresh() {
    if (renderer) renderer.refresh();
    if (view === "graph") minimap.refresh();
  }

  function destroy() {
    resizes.disconnect();
    viewport.destroy();
    if (renderer) renderer.destroy();
  }

  container.dataset.view = view;
  return {
    /** @returns {"graph" | "timeline"} the view on screen */
    get view() {
      return view;
    },
    /** @param {"graph" | "timeline"} name @returns {object | null} the scene `name` shows */
    scene: (name) => views[name].scene,
    show, userMoved, hintNewNodes, fit, switchTo, refresh, destroy,
  };
}
