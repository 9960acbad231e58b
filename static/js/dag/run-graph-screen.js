/**
 * What of the run graph is on screen: the scene each view (graph, timeline) shows, the renderer that
 * draws it (SVG when small, canvas when large), pan and zoom, and following the drawing as it grows:
 * a view the user has not moved is fitted again, one they moved stays put and is told of new nodes.
 * A tap, Enter or Space on a box is handed to `onActivate`.
 */
import { createCanvasRenderer } from "./render-canvas.js";
import { createSvgRenderer } from "./render-svg.js";
import { createViewport } from "./viewport.js";

/** Scenes with more boxes than this go to the canvas renderer. */
const SVG_MAX_BOXES = 400;

/**
 * @param {HTMLElement} container
 * @param {ReturnType<import("./run-graph-chrome.js").buildChrome>} ui
 * @param {object} handlers
 * @param {(box: object | null) => void} handlers.onActivate  called with the box tapped or activated, or null
 */
export function createScreen(container, ui, { onActivate }) {
  // `fitted` is the transform of the view's last automatic fit: while the view still has it, the
  // user has not panned or zoomed since, and the drawing keeps being fitted as it grows or resizes.
  const views = {
    graph: { scene: null, transform: null, fitted: null },
    timeline: { scene: null, transform: null, fitted: null },
  };
  let view = "graph";
  let renderer = null;
  let rendererKind = "";

  const viewport = createViewport(ui.stage, {
    onChange: (t) => {
      views[view].transform = t;
      if (renderer) renderer.setTransform(t);
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
    if (scene && !userMoved(view)) fitScene(view, scene);
  });
  resizes.observe(ui.stage);

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
  }

  function fitScene(name, scene) {
    viewport.fit(scene.bounds, { readable: name === "timeline" });
    views[name].fitted = views[name].transform;
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
    const scene = views[view].scene;
    if (scene) fitScene(view, scene);
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
    return true;
  }

  /** Redraws the scene on screen after its model changed in place. */
  function refresh() {
    if (renderer) renderer.refresh();
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
