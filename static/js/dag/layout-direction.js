/**
 * Which way a run graph flows when nobody picked a direction: the one whose drawing fits the canvas
 * best. A graph small enough to be wrapped (scene-graph.js's WRAP_MAX) is measured as it is drawn,
 * ELK's layout wrapped to the canvas when that fits it legibly: its extent cannot tell, for a graph
 * both deep and wide (the demo's pipeline) fits neither way whole, and whether it fits wrapped depends
 * on where ELK puts its rows, its planning calls and its loop-backs. A larger graph, never wrapped, goes
 * by each direction's rough extent (layout-sketch.js). The server picks with the same functions
 * (graphs/layout/dag_layout.mjs). Pure functions.
 */
import { layoutPlan } from "./layout.js";
import { DIRECTIONS, planExtents } from "./layout-sketch.js";
import { chooseDirection, wholeScale } from "./legibility.js";
import { WRAP_MAX, graphFit } from "./scene-graph.js";

/**
 * @typedef {"DOWN" | "RIGHT"} Direction
 * @typedef {import("./layout.js").Layout} Layout
 */

/**
 * The direction whose drawing fits a `width` × `height` canvas at the larger zoom, estimated from each
 * direction's extent (no layout, no wrap): the first guess, and the only one for a large graph.
 * @param {import("./model.js").Model} model
 * @returns {Direction}
 */
export function directionEstimated(model, width, height) {
  const extents = planExtents(layoutPlan({ model, previous: null }));
  const scales = {};
  for (const direction of DIRECTIONS) scales[direction] = wholeScale(extents[direction], width, height);
  return chooseDirection(scales);
}

/** @param {import("./model.js").Model} model @returns {boolean} whether its direction is measured */
export function directionMeasured(model) {
  return model.order.length <= WRAP_MAX;
}

/**
 * How `layout`'s drawing fits a `width` × `height` canvas as the page draws it (scene-graph.js's
 * graphFit): the zoom at which it fits whole, and the step from ELK's drawing that fits it legibly
 * (0 as laid out, then narrowed, wrapped, both), or null when none does.
 * @param {import("./model.js").Model} model
 * @param {Layout} layout
 * @returns {{scale: number, step: number | null}}
 */
export function layoutFit(model, layout, width, height) {
  const { scene, step } = graphFit(model, layout, { width, height });
  return { scale: wholeScale(scene.bounds, width, height), step };
}

/**
 * The layout of the first direction in `directions` (each once; the rest in the order DIRECTIONS
 * gives) that fits the canvas legibly as laid out; else, all laid out, of the one that fits legibly
 * with the fewest steps from ELK's drawing (narrowed, wrapped: layoutFit), the one at the larger zoom
 * when those tie, or when none fits legibly (chooseDirection). A direction is laid out only when none
 * before it fit as laid out, so list first those whose layout is at hand (the server's, a cached one).
 * @param {object} args
 * @param {(Direction | null | undefined)[]} args.directions  the order to try
 * @param {(direction: Direction) => Promise<Layout>} args.layoutOf  the layout flowing that way
 * @param {(layout: Layout) => {scale: number, step: number | null}} args.fitOf  how it fits (layoutFit)
 * @returns {Promise<Layout>}
 */
export async function layoutFitting({ directions, layoutOf, fitOf }) {
  const order = [...new Set([...directions.filter(Boolean), ...DIRECTIONS])];
  const tried = [];
  for (const direction of order) {
    const layout = await layoutOf(direction);
    const fit = fitOf(layout);
    if (fit.step === 0) return layout;
    tried.push({ direction, layout, ...fit });
  }
  const legible = tried.filter((fit) => fit.step !== null);
  const fewest = Math.min(...legible.map((fit) => fit.step));
  const pool = legible.length ? legible.filter((fit) => fit.step === fewest) : tried;
  if (pool.length === 1) return pool[0].layout;
  const picked = chooseDirection(Object.fromEntries(pool.map((fit) => [fit.direction, fit.scale])));
  return pool.find((fit) => fit.direction === picked).layout;
}
