// Planning inspector: a mini graph per planning call with the nodes that call added highlighted.
import { createRunGraph } from "./dag/run-graph.js";

function graphFetched(url) {
  return fetch(url, { credentials: "same-origin" }).then((response) => response.json());
}

for (const box of document.querySelectorAll(".mini-dag")) {
  const highlight = (box.dataset.highlight || "").split(" ").filter(Boolean);
  // A run too big to draw at once comes collapsed into stages: opening one fetches every node's record.
  const fetchWhole = () => graphFetched(`${box.dataset.graphUrl}?whole=1`);
  graphFetched(box.dataset.graphUrl)
    .then((data) => createRunGraph(box, { highlight, compact: true, fetchWhole }).load(data))
    .catch(() => { box.textContent = "The graph could not be loaded."; });
}
