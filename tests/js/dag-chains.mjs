// A top-down chain of work boxes under one planning box, as ELK lays a band of it out, and its model:
// the fixture the fit and wrap tests share.
import { modelFromPayload } from "../../static/js/dag/model.js";

export const BOX = { w: 226, h: 50 };
export const STEP = 86;

/** A top-down chain of `length` work boxes under one planning box, with ELK's route of each edge. */
export function chainLayout(length, { bandLabel = "" } = {}) {
  const pos = new Map([["__planning__", { x: 0, y: 0, w: 226, h: 30 }]]);
  const routes = new Map();
  for (let i = 0; i < length; i++) {
    pos.set(`n${i}`, { x: 12, y: 82 + i * STEP, ...BOX });
    if (i) routes.set(`n${i - 1}\u0000n${i}`, [125, 82 + (i - 1) * STEP + 50, 125, 82 + i * STEP]);
  }
  const bands = [{ x: 0, y: 70, w: 250, h: length * STEP, label: bandLabel }];
  return { direction: "DOWN", pos, routes, bands, planningRight: 238, bottom: 70 + length * STEP };
}

/** The run model of the same chain. */
export function chainModel(length) {
  const nodes = [{ node_id: "__planning__", kind: "planning", depends_on: [] }];
  for (let i = 0; i < length; i++) nodes.push({ node_id: `n${i}`, kind: "generic", depends_on: i ? [`n${i - 1}`] : [] });
  return modelFromPayload({ run: {}, nodes, edges: [], attempts: [] });
}
