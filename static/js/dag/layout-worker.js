/**
 * Layout worker: runs ELK layered off the main thread.
 *
 * A classic worker (not a module) because elkjs ships its engine as a non-module script for
 * importScripts. The URL of that script comes in the query string (`?elk=`) so the static
 * storage decides where it lives. Messages in: `{id, graph, options}` where `graph` is an ELK JSON
 * graph; out: `{id, width, height, xy, routes}` (compact: node positions as a Float64Array in the
 * input's child order and each edge's polyline as a flat number array in the input's edge order)
 * or `{id, error}`. The compact answer keeps structured-clone time small for thousands of nodes.
 */
/* global ELK */
importScripts(new URL(self.location.href).searchParams.get("elk"));
// elk.bundled.js also installs a dispatcher as `self.onmessage` (once its engine has initialised,
// so it cannot simply be replaced here); it only acts on messages with a `cmd`, which ours lack.
self.addEventListener("message", handleMessage);
// Only the layered algorithm: by default ELK registers the options of all nine of its algorithms.
const elk = new ELK({ algorithms: ["layered"] });

/** @param {MessageEvent} event */
async function handleMessage(event) {
  const { id, graph, options } = event.data;
  try {
    const laid = await elk.layout(graph, { layoutOptions: options });
    const xy = new Float64Array(laid.children.length * 2);
    laid.children.forEach((child, index) => {
      xy[index * 2] = child.x;
      xy[index * 2 + 1] = child.y;
    });
    const routes = laid.edges.map(flattenRoute);
    self.postMessage({ id, width: laid.width, height: laid.height, xy, routes }, [xy.buffer]);
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
}

/** @returns {number[]} x0, y0, x1, y1, … of the edge's first section (layered edges have one). */
function flattenRoute(edge) {
  const section = edge.sections && edge.sections[0];
  if (!section) return [];
  const points = [section.startPoint, ...(section.bendPoints || []), section.endPoint];
  return points.flatMap((point) => [point.x, point.y]);
}
