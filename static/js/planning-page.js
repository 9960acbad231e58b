// Planning inspector: a mini graph per planning call with the nodes that call added highlighted.
import { createRunGraph } from "./dag/run-graph.js";

for (const box of document.querySelectorAll(".mini-dag")) {
  const highlight = (box.dataset.highlight || "").split(" ").filter(Boolean);
  fetch(box.dataset.graphUrl, { credentials: "same-origin" })
    .then((response) => response.json())
    .then((data) => createRunGraph(box, { highlight, compact: true }).load(data))
    .catch(() => { box.textContent = "The graph could not be loaded."; });
}
