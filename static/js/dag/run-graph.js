/**
 * The run graph visualizer: public entry point.
 *
 *   const graph = createRunGraph(containerEl, { onSelect(nodeId) { ... }, fetchWhole: () => ... });
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
 * layout made with these same modules in Node.js by graphs/layout/run_layouts.py), or this browser's cache of
 * the run (layout-cache.js), when either places every node (run-graph-layouts.js); else it is computed
 * here in a Web Worker (layout-client.js), band by band (layout.js), keeping the positions of whichever
 * of the two places only some of the nodes, and cached. The worker starts only then. Scenes
 * (scene-*.js) are drawn as SVG when small and on a canvas when large (render-*.js).
 *
 * The flow direction (ELK's top-down or left-to-right) is the one the user picked with the toolbar's
 * switch, remembered per user, else the one whose drawing fits the stage best (layout-direction.js); a
 * layout is only taken from the server or the cache when it flows that way. A small graph too long for
 * the stage is drawn narrowed or wrapped to it (layout-tighten.js, layout-wrap.js): a view of the layout,
 * which itself stays as placed.
 *
 * A run of more work nodes than SIZE_GUARD opens collapsed into stages, one box each, counted from its
 * nodes' statuses: its graph.json is that alone (`collapsed`, graphs/reads/graph.py's run_graph_statuses),
 * and the whole graph (`fetchWhole`) is fetched once a stage is opened or the timeline shown.
 *
 * This module loads, appends and updates the run; run-graph-screen.js keeps the drawing on screen
 * (renderer, pan and zoom, following the run as it grows) and run-graph-chrome.js builds the toolbar,
 * stage and legend.
 */
import { cacheWrite } from "./layout-cache.js";
import { layoutFromJSON, layoutPlace, layoutPlan, layoutSketch, layoutStages } from "./layout.js";
import { layoutClient } from "./layout-client.js";
import { modelApplyUpdates, modelFromPayload } from "./model.js";
import { directionEstimated, directionMeasured, layoutFit, layoutFitting } from "./layout-direction.js";
import { buildChrome, directionPicked, directionRemember, showDirection } from "./run-graph-chrome.js";
import { keepsEveryPosition, servedLayout, startingLayout } from "./run-graph-layouts.js";
import { createScreen } from "./run-graph-screen.js";
import { nextTask, whenIdle } from "./scheduling.js";
import { WRAP_MAX, collapsedScene, graphSceneFitted } from "./scene-graph.js";
import { timelineScene } from "./scene-timeline.js";

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
 * @param {() => Promise<object>} [options.fetchWhole]  graph.json with every node's record (for a collapsed one)
 */
export function createRunGraph(
  container, { onSelect = () => {}, onView = () => {}, highlight = [], compact = false, elkUrl, fetchWhole } = {},
) {
  const client = layoutClient(elkUrl);
  const ui = buildChrome(container, compact);
  const highlighted = new Set(highlight);
  let model = null;
  let layout = null;
  /** The server's layout of the last payload (graph.json's `layout.placed`), for a change of direction. */
  let served = null;
  /** Collapsed runs: the stages, and the one drawn on its own (null while showing all stages). */
  let stages = null;
  let stageModel = null;
  let timelineDirty = true;
  /** Events already fired ("painted", "placed"): each fires once, for the first load. */
  const announced = new Set();
  let destroyed = false;
  let queue = Promise.resolve();
  /** Live updates that arrive while a newer graph.json is fetched or placed, replayed onto its model: a list each. */
  const buffers = new Set();

  const screen = createScreen(container, ui, {
    onActivate: activate,
    // The timeline spreads the run over the stage's width, and a small graph wraps to the stage: a fit
    // draws them anew for the stage they have.
    refitScene: (name, width) => {
      if (name === "timeline") return model ? timelineScene(model, { width }) : null;
      return model && layout && !stages && model.order.length <= WRAP_MAX ? sceneOf(model, layout) : null;
    },
  });
  const { show, userMoved, hintNewNodes, fit } = screen;
  ui.directionButton.addEventListener("click", () => turn());
  ui.graphButton.addEventListener("click", () => setView("graph"));
  ui.timelineButton.addEventListener("click", () => setView("timeline"));
  ui.backButton.addEventListener("click", () => showStages());

  /** The graph's scene of `layout` for the stage as it is now (wrapped to it when that fits it legibly). */
  function sceneOf(drawn, placed) {
    const canvas = { width: ui.stage.clientWidth || 1, height: ui.stage.clientHeight || 1 };
    return graphSceneFitted(drawn, placed, { highlight: highlighted, ...canvas });
  }

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
    const scene = sceneOf(model, sketch);
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
        served = servedLayout(payload);
        const { placed, refit } = await placeOnLoad(started);
        if (destroyed) return;
        layout = placed;
        const scene = sceneOf(model, layout);
        await nextTask();
        if (destroyed) return;
        showDirection(ui.directionButton, layout.direction);
        show("graph", scene, { refit });
      }
      if (screen.view === "timeline") refreshTimeline();
      announce("painted", started);
      announce("placed", started);
    });
  }

  /**
   * The layout a load draws, and whether to fit it: in the direction this user picked, else, for a graph
   * small enough to wrap, in the one measured to fit the stage legibly (layout-direction.js; the
   * server's layout measured first, as it is at hand), else in the estimated one, sketched first when
   * ELK has several bands to place.
   * @returns {Promise<{placed: import("./layout.js").Layout | null, refit: boolean}>}
   */
  async function placeOnLoad(started) {
    const width = ui.stage.clientWidth || 1;
    const height = ui.stage.clientHeight || 1;
    const picked = directionPicked();
    if (!picked && directionMeasured(model)) {
      const placed = await layoutFitting({
        directions: [served && layoutFromJSON(served).direction, directionEstimated(model, width, height)],
        layoutOf: (direction) => layoutIn(model, direction),
        fitOf: (candidate) => layoutFit(model, candidate, width, height),
      });
      return { placed, refit: true };
    }
    const direction = picked || directionEstimated(model, width, height);
    const start = startingLayout(model, served, direction);
    await nextTask();
    if (destroyed) return { placed: null, refit: false };
    if (start && start.complete) return { placed: start.layout, refit: true };
    say(model.order.length > 300 ? `Laying out ${model.order.length.toLocaleString("en")} nodes…` : "");
    const plan = layoutPlan({ model, previous: start && start.layout, direction });
    const [placed] = await Promise.all([place(model, plan), drawSketch(plan, started)]);
    say("");
    // Someone who zoomed or panned the sketch keeps that view; otherwise ELK's drawing is fitted.
    return { placed, refit: !userMoved("graph") };
  }

  /** `next`'s layout flowing `direction`: the server's or the cached one when it places every node, else placed. */
  function layoutIn(next, direction) {
    const start = startingLayout(next, served, direction);
    if (start && start.complete) return Promise.resolve(start.layout);
    return place(next, layoutPlan({ model: next, previous: start && start.layout, direction }));
  }

  /**
   * Places the nodes a refetched graph.json adds; everything already drawn keeps its position.
   * @param {object} payload
   */
  function append(payload) {
    const buffer = buffering();
    return serial(async () => {
      const next = modelFromPayload(payload);
      if (!model || next.order.length > SIZE_GUARD || stages) {
        model = next;
        replay(buffer);
        timelineDirty = true;
        if (stages) showStages();
        if (screen.view === "timeline") refreshTimeline();
        return;
      }
      served = servedLayout(payload);
      const ready = served && layoutFromJSON(served);
      const placed = ready && keepsEveryPosition(ready, layout, next)
        ? ready
        : await place(next, layoutPlan({ model: next, previous: layout }));
      if (destroyed) return;
      const added = next.order.filter((id) => !model.nodes.has(id)).length;
      model = next;
      layout = placed;
      replay(buffer);
      // Appended nodes come into view: the drawing is fitted again unless the user moved it, who
      // is told how many nodes were added instead (the hint fits on click).
      const follow = !userMoved("graph");
      show("graph", sceneOf(model, layout), { refit: follow });
      if (!follow && added) hintNewNodes(added);
      timelineDirty = true;
      if (screen.view === "timeline") refreshTimeline();
    });
  }

  /** Lays the graph out in the other direction, remembered as this user's pick, and fits it. */
  function turn() {
    return serial(async () => {
      if (!model || !layout || stages) return;
      const direction = layout.direction === "RIGHT" ? "DOWN" : "RIGHT";
      directionRemember(direction);
      const placed = await layoutIn(model, direction);
      if (destroyed) return;
      layout = placed;
      showDirection(ui.directionButton, direction);
      show("graph", sceneOf(model, layout), { refit: true });
    });
  }

  function buffering() {
    const buffer = [];
    buffers.add(buffer);
    return buffer;
  }

  function replay(buffer) {
    buffers.delete(buffer);
    if (buffer.length) modelApplyUpdates(model, buffer);
  }

  /** Replaces a collapsed model (no edges, no attempts) by the whole graph's, with the updates since its fetch. */
  async function wholeModel() {
    if (!model.collapsed) return;
    const buffer = buffering();
    const payload = await fetchWhole().finally(() => buffers.delete(buffer));
    model = modelFromPayload(payload);
    replay(buffer);
  }

  /**
   * Applies live `nodes` events: recolours boxes, bumps attempt badges and loop-back counts, and
   * adds attempts to the timeline.
   * @param {{node_exec_id: string, node_id: string, attempt: number, status: string, cause?: string,
   *          cause_node_id?: string}[]} updates
   */
  function updateNodes(updates) {
    if (!model) return;
    for (const buffer of buffers) buffer.push(...updates);
    const changed = modelApplyUpdates(model, updates);
    if (stageModel) modelApplyUpdates(stageModel, updates);
    if (!changed) return;
    timelineDirty = true;
    redrawSoon();
  }

  // However many status events a frame brings (a storm of them comes hundreds a second), the drawing
  // is redone once for them, at the next frame: the page keeps up, and its other work (the regions'
  // fetches, the socket) is not starved by a redraw per event.
  let redrawQueued = false;
  function redrawSoon() {
    if (redrawQueued) return;
    redrawQueued = true;
    requestAnimationFrame(() => {
      redrawQueued = false;
      if (!model) return;
      if (screen.view === "timeline") refreshTimeline();
      else if (stages && !stageModel) show("graph", collapsedScene(model, stages), { refit: false });
      else screen.refresh();
    });
  }

  function refreshTimeline() {
    if (!model || !timelineDirty) return;
    if (!model.collapsed) return drawTimeline();
    // The timeline draws every attempt, which a collapsed graph.json leaves out.
    serial(async () => {
      await wholeModel();
      if (!destroyed && screen.view === "timeline") drawTimeline();
    });
  }

  function drawTimeline() {
    timelineDirty = false;
    show("timeline", timelineScene(model, { width: ui.stage.clientWidth }), { refit: !screen.scene("timeline") });
  }

  function showStages() {
    stages = layoutStages(model.order, model);
    stageModel = null;
    ui.backButton.hidden = true;
    say(`${model.order.length.toLocaleString("en")} nodes: too many to draw at once. Pick a stage.`);
    show("graph", collapsedScene(model, stages), { refit: true });
  }

  async function drawStage(index) {
    say(`Laying out ${stages[index].ids.length.toLocaleString("en")} nodes of ${stages[index].org}…`);
    if (model.collapsed) await serial(wholeModel);
    if (destroyed || !stages?.[index]) return;
    const members = new Set(stages[index].ids);
    const pick = (ids) => ids.filter((id) => members.has(id)).map((id) => model.nodes.get(id));
    stageModel = modelFromPayload({
      run: model.run,
      nodes: pick(model.order).map((node) => ({ ...node, depends_on: node.depends_on.filter((id) => members.has(id)) })),
      edges: [...model.dataEdges, ...model.loopEdges].filter((edge) => members.has(edge.from) && members.has(edge.to)),
      attempts: model.attempts.filter((attempt) => members.has(attempt.node_id)),
    });
    const direction = directionPicked()
      || directionEstimated(stageModel, ui.stage.clientWidth || 1, ui.stage.clientHeight || 1);
    const placed = await layoutPlace({ plan: layoutPlan({ model: stageModel, previous: null, direction }), client });
    if (destroyed || !stageModel) return;
    say(`Stage ${index + 1} of ${stages.length}: ${stages[index].org}`);
    ui.backButton.hidden = false;
    if (screen.view === "graph") show("graph", sceneOf(stageModel, placed), { refit: true });
  }

  /** @param {"graph" | "timeline"} name */
  function setView(name) {
    if (!screen.switchTo(name)) return;
    if (name === "timeline" && (timelineDirty || !screen.scene("timeline"))) {
      refreshTimeline();
    } else if (screen.scene(name)) {
      show(name, screen.scene(name), { refit: false });
    }
    onView(name);
  }

  function destroy() {
    destroyed = true;
    screen.destroy();
    ui.root.remove();
    container.classList.remove("dag");
    delete container.dataset.painted;
    delete container.dataset.placed;
  }

  return { load, append, updateNodes, setView, fit, destroy };
}
