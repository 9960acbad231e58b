// The server's layout of a run's DAG: the browser's own placement code (static/js/dag/layout.js) with
// the same elkjs build, run once per graph by graphs/layout/compute.py so a first visit paints ELK's drawing
// without laying it out.
//
// stdin:  {"graph": {"nodes": [...], "edges": [...], "direction": "auto" | "DOWN" | "RIGHT"},
//          "previous": <layoutToJSON> | null}
//         (graph.json's shape, cut to what placement reads; see layouts.layout_input)
// stdout: {"layout": <layoutToJSON>, "ms": <ELK and placement time>}
// Any failure exits non-zero with the reason on stderr.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import { REFERENCE_CANVAS } from "../../static/js/dag/legibility.js";
import {
  directionEstimated, directionMeasured, layoutFit, layoutFitting,
} from "../../static/js/dag/layout-direction.js";
import { layoutFromJSON, layoutPlace, layoutPlan, layoutToJSON } from "../../static/js/dag/layout.js";
import { modelFromPayload } from "../../static/js/dag/model.js";

const require = createRequire(import.meta.url);
// The bundle the browser's worker loads (node_modules/elkjs/lib, served at /static/vendor/elkjs/): in
// Node it runs ELK in-process, as it does inside that worker.
const ELK = require("../../node_modules/elkjs/lib/elk.bundled.js");
const elk = new ELK({ algorithms: ["layered"] });

/** The layout worker's protocol (static/js/dag/layout-worker.js), answered in-process. */
const client = {
  async layout(graph, options) {
    const laid = await elk.layout(graph, { layoutOptions: options });
    const xy = new Float64Array(laid.children.length * 2);
    laid.children.forEach((child, index) => {
      xy[index * 2] = child.x;
      xy[index * 2 + 1] = child.y;
    });
    return { width: laid.width, height: laid.height, xy, routes: laid.edges.map(flattenRoute) };
  },
};

/** As layout-worker.js flattens it: x0, y0, x1, y1, … of the edge's first section. */
function flattenRoute(edge) {
  const section = edge.sections && edge.sections[0];
  if (!section) return [];
  const points = [section.startPoint, ...(section.bendPoints || []), section.endPoint];
  return points.flatMap((point) => [point.x, point.y]);
}

const request = JSON.parse(readFileSync(0, "utf8"));
const started = performance.now();
const model = modelFromPayload({ run: {}, ...request.graph });
const previous = request.previous ? layoutFromJSON(request.previous) : null;
const { w, h } = REFERENCE_CANVAS;
const placed = (direction) => layoutPlace({ plan: layoutPlan({ model, previous, direction }), client });
// "auto": the direction the page picks for a graph on a desktop's stage (an append keeps previous's): a
// small graph's measured as drawn, a larger one's estimated.
const asked = request.graph.direction;
let layout;
if (asked === "DOWN" || asked === "RIGHT") {
  layout = await placed(asked);
} else if (previous || !directionMeasured(model)) {
  layout = await placed(directionEstimated(model, w, h));
} else {
  layout = await layoutFitting({
    directions: [directionEstimated(model, w, h)],
    layoutOf: placed,
    fitOf: (candidate) => layoutFit(model, candidate, w, h),
  });
}
process.stdout.write(JSON.stringify({ layout: layoutToJSON(layout), ms: Math.round(performance.now() - started) }));
