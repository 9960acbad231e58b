/**
 * The run graph visualizer: public entry point.
 *
 *   const graph = createRunGraph(containerEl, { onSelect(nodeId) { ... } });
 *   await graph.load(payload);       // graph.json
 *   graph.updateNodes(event.nodes);  // live `nodes` events
 *   await graph.append(payload);     // graph.json refetched after `nodes_appended`
 *   graph.setView("timeline");       // or "graph"
 *   graph.fit();
 *   graph.destroy();
 *
 * The container gets `data-painted="true"` and a `dag:painted` CustomEvent ({nodes, ms}) once the
 * first full drawing is on screen, and `data-placed="true"` with `dag:placed` once that drawing uses
 * ELK's layout. They coincide except on a cold load of a graph of several bands, which is first
 * drawn from a quick sketch (layout.js) and redrawn when ELK's layout arrives.
 *
 * Where the layout comes from, first that applies: the server's (graph.json's `layout.placed`, ELK's
 * layout made with these same modules in Node.js by graphs/run_layouts.py), or this browser's cache of
 * the run (layout-cache.js), when either places every node; else it is computed here in a Web Worker
 * (layout-client.js), band by band (layout.js), keeping the positions of whichever of the two places
 * only some of the nodes, and cached. The worker starts only then. Scenes (scene-*.js) are drawn as SVG
 * when small and on a canvas when large (render-*.js).
 */
import { cacheRead, cacheWrite } from "./layout-cache.js";
import { layoutFromJSON, layoutPlace, layoutPlan, layoutSketch, layoutStages } from "./layout.js";
import { layoutClient } from "./layout-client.js";
import { createLegend } from "./legend.js";
import { modelApplyUpdates, modelFromPayload } from "./model.js";
import { createCanvasRenderer } from "./render-canvas.js";
import { createSvgRenderer } from "./render-svg.js";
import { collapsedScene, graphScene } from "./scene-graph.js";
import { timelineScene } from "./scene-timeline.js";
import { createViewport } from "./viewport.js";

/** Scenes with more boxes than this go to the canvas renderer. */
const SVG_MAX_BOXES = 400;
/** Runs with more work nodes than this open collapsed into stages instead of laying out all. */
const SIZE_GUARD = 5000;

/**
 * @param {HTMLElement} container
 * @param {object} [options]
 * @param {(nodeId: string) => void} [options.onSelect]  called with the node_id of a clicked box
 * @param {(view: "graph" | "timeline") => void} [options.onView]  called when the view changes
 * @param {string[]} [options.highlight]  node_ids drawn with a highlight ring (e.g. what a planning call added)
 * @param {boolean} [options.compact]  no toolbar and no legend: a mini graph (wheel, drag and keys still work)
 * @param {string} [options.elkUrl]  URL of elkjs's elk.bundled.js (default: /static/vendor/elkjs/)
 */
export function createRunGraph(
  container, { onSelect = () => {}, onView = () => {}, highlight = [], compact = false, elkUrl } = {},
) {
  const client = layoutClient(elkUrl);
  const ui = buildChrome(container, compact);
  const highlighted = new Set(highlight);
  // `fitted` is the transform of the view's last automatic fit: while the view still has it, the
  // user has not panned or zoomed since, and the drawing keeps being fitted as it grows or resizes.
  const views = {
    graph: { scene: null, transform: null, fitted: null },
    timeline: { scene: null, transform: null, fitted: null },
  };
  let view = "graph";
  let model = null;
  let layout = null;
  /** Collapsed runs: the stages, and the one drawn on its own (null while showing all stages). */
  let stages = null;
  let stageModel = null;
  let renderer = null;
  let rendererKind = "";
  let timelineDirty = true;
  /** Events already fired ("painted", "placed"): each fires once, for the first load. */
  const announced = new Set();
  let destroyed = false;
  let queue = Promise.resolve();
  /** Live updates that arrive while an append is being placed, replayed onto the new model. */
  let buffered = null;

  const viewport = createViewport(ui.stage, {
    onChange: (t) => {
      views[view].transform = t;
      if (renderer) renderer.setTransform(t);
    },
    onTap: (event, world) => activate(renderer && renderer.pick(event, world)),
    onFitKey: () => fit(),
  });
  ui.stage.addEventListener("keydown", (event) => {
    if ((event.key === "Enter" || event.key === " ") && renderer && renderer.focused()) {
      event.preventDefault();
      activate(renderer.focused());
    }
  });
  ui.graphButton.addEventListener("click", () => setView("graph"));
  ui.timelineButton.addEventListener("click", () => setView("timeline"));
  ui.zoomIn.addEventListener("click", () => viewport.zoom(1.25));
  ui.zoomOut.addEventListener("click", () => viewport.zoom(0.8));
  ui.fitButton.addEventListener("click", () => fit());
  ui.newNodes.addEventListener("click", () => fit());
  ui.backButton.addEventListener("click", () => showStages());
  // The side panel opening, a phone turning or a window resized change the stage's size: a view the
  // user has not moved is fitted again, one they have moved is left where they put it.
  const resizes = new ResizeObserver(() => {
    const scene = views[view].scene;
    if (scene && !userMoved(view)) fitScene(view, scene);
  });
  resizes.observe(ui.stage);

  function activate(box) {
    if (!box) return;
    if (box.kind === "group") drawStage(box.stage);
    else onSelect(box.id);
  }

  function serial(job) {
    queue = queue.then(job, job);
    return queue;
  }

  function say(text) {
    ui.status.textContent = text;
  }

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

  /** Sets `data-<name>` and fires `dag:<name>` once the drawing on screen has been presented. */
  function announce(name, started) {
    if (announced.has(name)) return;
    announced.add(name);
    // Two frames: the first runs the draw, the second starts after it was presented.
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        if (destroyed) return;
        container.dataset[name] = "true";
        const detail = { nodes: model.nodes.size, ms: Math.round(performance.now() - started) };
        container.dispatchEvent(new CustomEvent(`dag:${name}`, { detail }));
      }),
    );
  }

  /**
   * The layout a load starts from: the server's (`served`) or the run's cached one, if every node it
   * places is still in `next`, with `complete` when it places all of `next` (the cache's also for the
   * same manifest version): then no layout is needed at all. The server's comes first: it is the one
   * every visitor sees. Neither complete, the one placing more nodes is kept and the rest placed.
   * @param {import("./model.js").Model} next
   * @param {object | null} served  graph.json's `layout.placed` (layoutToJSON), or null
   * @returns {{layout: import("./layout.js").Layout, complete: boolean} | null}
   */
  function startingLayout(next, served) {
    const drawn = (layout) => [...layout.pos.keys()].every((id) => next.nodes.has(id));
    const placesAll = (layout) => [...next.planning, ...next.order].every((id) => layout.pos.has(id));
    const candidates = [];
    if (served) {
      const layout = layoutFromJSON(served);
      if (drawn(layout)) candidates.push({ layout, complete: placesAll(layout) });
    }
    const cached = cacheRead(next.run.run_id);
    if (cached && drawn(cached.layout)) {
      const complete = cached.manifestVersion === next.run.manifest_version && placesAll(cached.layout);
      candidates.push({ layout: cached.layout, complete });
    }
    const whole = candidates.find((candidate) => candidate.complete);
    if (whole) return whole;
    candidates.sort((a, b) => b.layout.pos.size - a.layout.pos.size);
    return candidates[0] || null;
  }

  /** Lays out what the plan holds (layout.js) and caches the result. */
  async function place(next, plan) {
    const placed = await layoutPlace({ plan, client });
    // When idle, after the paint: serialising a large layout would otherwise delay the first frame.
    whenIdle(() => cacheWrite(next.run.run_id, next.run.manifest_version, placed));
    return placed;
  }

  /**
   * Draws the sketch of a cold load of several bands (layout.js) while ELK works. Sketching and
   * drawing run in tasks of their own, after the one that handed ELK its bands: on a cold page each
   * step takes up to a couple of hundred milliseconds at 3,000 nodes, and in one task they would
   * hold up input that long.
   */
  async function drawSketch(plan, started) {
    await nextTask();
    const sketch = layoutSketch({ plan });
    if (!sketch) return;
    const scene = graphScene(model, sketch, highlighted);
    await nextTask();
    if (destroyed) return;
    show("graph", scene, { refit: true });
    announce("painted", started);
  }

  /**
   * Draws a run from its graph.json payload. Resolves once laid out by ELK and drawn.
   * @param {object} payload
   */
  function load(payload) {
    return serial(async () => {
      const started = performance.now();
      // Each step of a load in a task of its own: at 3,000 nodes parsing graph.json, indexing it,
      // reading the layout, building the scene and the renderer's paths take tens of milliseconds
      // each, and together they would hold up input for a few hundred.
      await nextTask();
      model = modelFromPayload(payload);
      timelineDirty = true;
      await nextTask();
      if (destroyed) return;
      if (model.order.length > SIZE_GUARD) {
        showStages();
      } else {
        const start = startingLayout(model, servedLayout(payload));
        await nextTask();
        if (destroyed) return;
        let refit = true;
        if (start && start.complete) {
          layout = start.layout;
        } else {
          say(model.order.length > 300 ? `Laying out ${model.order.length.toLocaleString("en")} nodes…` : "");
          const plan = layoutPlan({ model, previous: start && start.layout });
          const [placed] = await Promise.all([place(model, plan), drawSketch(plan, started)]);
          if (destroyed) return;
          layout = placed;
          say("");
          // Someone who zoomed or panned the sketch keeps that view; otherwise ELK's drawing is fitted.
          refit = !userMoved("graph");
        }
        const scene = graphScene(model, layout, highlighted);
        await nextTask();
        if (destroyed) return;
        show("graph", scene, { refit });
      }
      if (view === "timeline") refreshTimeline();
      announce("painted", started);
      announce("placed", started);
    });
  }

  /**
   * Places the nodes a refetched graph.json adds; everything already drawn keeps its position.
   * @param {object} payload
   */
  function append(payload) {
    buffered = [];
    return serial(async () => {
      const next = modelFromPayload(payload);
      if (!model || next.order.length > SIZE_GUARD || stages) {
        model = next;
        replayBuffered();
        if (stages) showStages();
        return;
      }
      const served = servedLayout(payload);
      const ready = served && layoutFromJSON(served);
      const placed = ready && keepsEveryPosition(ready, layout, next)
        ? ready
        : await place(next, layoutPlan({ model: next, previous: layout }));
      if (destroyed) return;
      const added = next.order.filter((id) => !model.nodes.has(id)).length;
      model = next;
      layout = placed;
      replayBuffered();
      // Appended nodes come into view: the drawing is fitted again unless the user moved it, who
      // is told how many nodes were added instead (the hint fits on click).
      const follow = !userMoved("graph");
      show("graph", graphScene(model, layout, highlighted), { refit: follow });
      if (!follow && added) hintNewNodes(added);
      timelineDirty = true;
      if (view === "timeline") refreshTimeline();
    });
  }

  function replayBuffered() {
    if (buffered && buffered.length) modelApplyUpdates(model, buffered);
    buffered = null;
  }

  /**
   * Applies live `nodes` events: recolours boxes, bumps attempt badges and loop-back counts, and
   * adds attempts to the timeline.
   * @param {{node_exec_id: string, node_id: string, attempt: number, status: string, cause?: string,
   *          cause_node_id?: string}[]} updates
   */
  function updateNodes(updates) {
    if (!model) return;
    if (buffered) buffered.push(...updates);
    const changed = modelApplyUpdates(model, updates);
    if (stageModel) modelApplyUpdates(stageModel, updates);
    if (!changed) return;
    timelineDirty = true;
    if (view === "timeline") refreshTimeline();
    else if (stages && !stageModel) show("graph", collapsedScene(model, stages), { refit: false });
    else if (renderer) renderer.refresh();
  }

  function refreshTimeline() {
    if (!model || !timelineDirty) return;
    timelineDirty = false;
    show("timeline", timelineScene(model), { refit: !views.timeline.scene });
  }

  function showStages() {
    stages = layoutStages(model.order, model);
    stageModel = null;
    ui.backButton.hidden = true;
    say(`${model.order.length.toLocaleString("en")} nodes: too many to draw at once. Pick a stage.`);
    show("graph", collapsedScene(model, stages), { refit: true });
  }

  async function drawStage(index) {
    const members = new Set(stages[index].ids);
    const pick = (ids) => ids.filter((id) => members.has(id)).map((id) => model.nodes.get(id));
    stageModel = modelFromPayload({
      run: model.run,
      nodes: pick(model.order).map((node) => ({ ...node, depends_on: node.depends_on.filter((id) => members.has(id)) })),
      edges: [...model.dataEdges, ...model.loopEdges].filter((edge) => members.has(edge.from) && members.has(edge.to)),
      attempts: model.attempts.filter((attempt) => members.has(attempt.node_id)),
    });
    say(`Laying out ${members.size.toLocaleString("en")} nodes of ${stages[index].org}…`);
    const placed = await layoutPlace({ plan: layoutPlan({ model: stageModel, previous: null }), client });
    if (destroyed || !stageModel) return;
    say(`Stage ${index + 1} of ${stages.length}: ${stages[index].org}`);
    ui.backButton.hidden = false;
    if (view === "graph") show("graph", graphScene(stageModel, placed, highlighted), { refit: true });
  }

  /** @param {"graph" | "timeline"} name */
  function setView(name) {
    if (!views[name] || name === view) return;
    view = name;
    ui.graphButton.setAttribute("aria-pressed", String(name === "graph"));
    ui.timelineButton.setAttribute("aria-pressed", String(name === "timeline"));
    container.dataset.view = name;
    if (name === "timeline" && (timelineDirty || !views.timeline.scene)) {
      refreshTimeline();
    } else if (views[name].scene) {
      show(name, views[name].scene, { refit: false });
    }
    onView(name);
  }

  /** Fits the current view's drawing into the container; it follows the run's growth again. */
  function fit() {
    const scene = views[view].scene;
    if (scene) fitScene(view, scene);
    hintNewNodes(0);
  }

  function destroy() {
    destroyed = true;
    resizes.disconnect();
    viewport.destroy();
    if (renderer) renderer.destroy();
    ui.root.remove();
    container.classList.remove("dag");
    delete container.dataset.painted;
    delete container.dataset.placed;
  }

  container.dataset.view = view;
  return { load, append, updateNodes, setView, fit, destroy };
}

/** @param {object} payload graph.json @returns {object | null} the server's layout of the run, if any */
function servedLayout(payload) {
  return (payload.layout && payload.layout.placed) || null;
}

/**
 * Whether `candidate` places every node of `next` and keeps every box of `drawn` where it is: then an
 * append can take it whole, and nothing on screen moves.
 */
function keepsEveryPosition(candidate, drawn, next) {
  if (![...next.planning, ...next.order].every((id) => candidate.pos.has(id))) return false;
  for (const [id, rect] of drawn.pos) {
    const kept = candidate.pos.get(id);
    if (!kept || kept.x !== rect.x || kept.y !== rect.y) return false;
  }
  return true;
}

/** @returns {Promise<void>} resolved in a later task, so the browser can handle input and draw between */
function nextTask() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Runs `job` when the main thread is idle (Safari has no requestIdleCallback: a short delay). */
function whenIdle(job) {
  if (window.requestIdleCallback) window.requestIdleCallback(job, { timeout: 5000 });
  else setTimeout(job, 200);
}

/** Toolbar, stage (the drawing surface) and legend, built with DOM calls only. */
function buildChrome(container, compact) {
  container.classList.add("dag");
  const root = document.createElement("div");
  root.className = "dag-root";
  const toolbar = document.createElement("div");
  toolbar.className = "dag-toolbar";
  toolbar.setAttribute("role", "toolbar");
  toolbar.setAttribute("aria-label", "Run graph controls");
  const button = (text, label, extra = {}) => {
    const element = document.createElement("button");
    element.type = "button";
    element.className = "dag-button";
    element.textContent = text;
    element.title = label;
    element.setAttribute("aria-label", label);
    Object.assign(element, extra);
    return element;
  };
  const graphButton = button("Graph", "Show the graph");
  const timelineButton = button("As it ran", "Show every attempt in time order");
  graphButton.setAttribute("aria-pressed", "true");
  timelineButton.setAttribute("aria-pressed", "false");
  const views = document.createElement("div");
  views.className = "dag-views";
  views.append(graphButton, timelineButton);
  const zoomOut = button("−", "Zoom out");
  const zoomIn = button("+", "Zoom in");
  const fitButton = button("Fit", "Fit the drawing to the view");
  const backButton = button("← All stages", "Back to all stages", { hidden: true });
  const newNodes = button("", "Nodes were added outside the view: fit the drawing to show them", { hidden: true });
  newNodes.classList.add("dag-new-nodes");
  const status = document.createElement("span");
  status.className = "dag-status";
  status.setAttribute("role", "status");
  toolbar.append(views, zoomOut, zoomIn, fitButton, backButton, newNodes, status);
  toolbar.hidden = compact;
  const stage = document.createElement("div");
  stage.className = "dag-stage";
  stage.tabIndex = 0;
  stage.setAttribute("aria-label", "Run graph: drag to pan, wheel or + and - to zoom, 0 to fit, Tab to the nodes");
  // The legend sits beside the stage, not in it, so dragging or wheeling over it never pans.
  const frame = document.createElement("div");
  frame.className = "dag-frame";
  frame.append(stage);
  if (!compact) frame.append(createLegend());
  root.append(toolbar, frame);
  container.appendChild(root);
  return { root, stage, status, graphButton, timelineButton, zoomIn, zoomOut, fitButton, backButton, newNodes };
}
