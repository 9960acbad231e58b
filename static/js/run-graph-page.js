// Run graph page: the DAG (or "as it ran" timeline), live over /ws/runs/<id>/, with a side panel.
//
// What the page says about the run — its status, progress, cost, controls, what it waits for, why it
// stopped, what landed on its branch — is the server's: those regions are fetched again whenever the run
// reports a change (live-regions.js, from the page's data-live-url) and swapped in whole. The script
// itself only draws: the graph's boxes from graph.json and the node events, and the side panel.
import { connectRun } from "./live.js";
import { liveRegions } from "./live-regions.js";
import { createRunGraph } from "./dag/run-graph.js";
import { payloadExpanded } from "./dag/model.js";
import { diffViewsShow } from "./diff-view.js";
import { nodePanelMount } from "./node-panel.js";

diffViewsShow();

const container = document.getElementById("dag");
const panel = document.getElementById("panel");
const panelTitle = document.getElementById("panel-title");
const panelBody = document.getElementById("panel-body");
let latestData = null;

// The run's status as the server last rendered it in the page's header.
function runStatus() {
  return document.querySelector("#run-status .status")?.dataset.status ?? "";
}

let shownRunStatus = runStatus();
const regions = liveRegions({
  url: container.dataset.liveUrl,
  onApplied() {
    diffViewsShow(document.getElementById("changes"));
    if (runStatus() !== shownRunStatus) {
      shownRunStatus = runStatus();
      // What the request that made the page announced ("the run has started") is stale now.
      document.querySelectorAll("main > .messages").forEach((messages) => messages.remove());
      nodePanel.runChanged();
    }
  },
});

// graph.json is tagged (ETag) and never taken from the cache unchecked: while the run is as the browser
// last fetched it, the server answers 304 and the body comes from the HTTP cache; after any change,
// the new graph. `whole`: every node's record of a run whose graph.json comes collapsed into stages.
async function fetchGraph({ whole = false } = {}) {
  const url = whole ? `${container.dataset.graphUrl}?whole=1` : container.dataset.graphUrl;
  const response = await fetch(url, { credentials: "same-origin", signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`graph.json answered ${response.status}`);
  latestData = payloadExpanded(await response.json());
  return latestData;
}

const nodePanel = nodePanelMount({ panel, title: panelTitle, body: panelBody, panelUrl: container.dataset.panelUrl });

function openPanel(nodeId) {
  return nodePanel.open(nodeId);
}

function closePanel() {
  nodePanel.close();
}

// The selected node and the view live in the URL (?node=…&view=timeline): a node can be linked, and
// Back steps through the nodes that were opened.
function urlWith(changes) {
  const url = new URL(window.location.href);
  for (const [key, value] of Object.entries(changes)) {
    if (value) url.searchParams.set(key, value);
    else url.searchParams.delete(key);
  }
  return url;
}

// The keyboard path: a node chosen (Enter on its box, or a click) takes the focus into the panel;
// closing the panel gives it back to the box it came from.
let chosenFrom = null;

function selectNode(nodeId) {
  if (new URL(window.location.href).searchParams.get("node") !== nodeId) {
    history.pushState(null, "", urlWith({ node: nodeId }));
  }
  chosenFrom = document.activeElement;
  openPanel(nodeId);
  panelTitle.focus({ preventScroll: !window.matchMedia("(max-width: 900px)").matches });
}

// The box it came from, or the box drawn for the same node since (the drawing is redrawn when the
// panel's opening narrows the stage).
function chosenBox() {
  if (chosenFrom?.isConnected) return chosenFrom;
  const nodeId = chosenFrom?.dataset?.nodeId;
  return nodeId ? container.querySelector(`.dag-box[data-node-id="${CSS.escape(nodeId)}"]`) : null;
}

function unselectNode() {
  if (panel.hidden) return;
  history.pushState(null, "", urlWith({ node: null }));
  closePanel();
  chosenBox()?.focus();
  chosenFrom = null;
}

function followUrl() {
  const params = new URL(window.location.href).searchParams;
  graph.setView(params.get("view") === "timeline" ? "timeline" : "graph");
  const nodeId = params.get("node");
  if (nodeId) openPanel(nodeId);
  else closePanel();
}

document.getElementById("panel-close").addEventListener("click", unselectNode);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !panel.hidden) unselectNode();
});
window.addEventListener("popstate", followUrl);

// The graph module brings its own toolbar: graph / "as it ran", zoom and fit.
const graph = createRunGraph(container, {
  onSelect: selectNode,
  onView: (view) => history.replaceState(null, "", urlWith({ view: view === "timeline" ? view : null })),
  fetchWhole: () => fetchGraph({ whole: true }),
});

// A node the drawing does not have yet (a planning call just made, an appended or looped-back node):
// the graph is fetched again, and the new boxes drawn.
function unknownTo(nodes) {
  const drawn = new Set(latestData?.nodes.map((node) => node.node_id));
  return nodes.some((node) => !drawn.has(node.node_id));
}

// A graph the run has outgrown: nodes appended since graph.json was fetched have no attempt yet, so only
// the manifest's version tells of them (a snapshot's, as the socket opens after the graph is drawn).
function outgrown(snapshot) {
  return snapshot.manifest_version !== undefined && snapshot.manifest_version !== latestData?.run.manifest_version;
}

fetchGraph().then((data) => graph.load(data)).then(() => {
  followUrl();
  let snapshots = 0;
  connectRun(container.dataset.wsUrl, {
    // A snapshot comes on every (re)connect, and whenever the run changed without an event reaching
    // this page (another process ran it, or events were lost): redraw from it and from graph.json.
    async onSnapshot(snapshot) {
      snapshots += 1;
      // The first one too: the run may have moved between the page's rendering and the socket's opening.
      regions.refresh();
      // What the snapshot says is drawn at once; a graph that has grown meanwhile follows once fetched.
      graph.updateNodes(snapshot.nodes ?? []);
      // The panel may have missed what this snapshot catches up on: it checks against the server.
      if (snapshots > 1) nodePanel.runChanged();
      else nodePanel.nodesChanged(snapshot.nodes ?? []);
      if (snapshots > 1 || unknownTo(snapshot.nodes ?? []) || outgrown(snapshot)) {
        await graph.append(await fetchGraph());
        graph.updateNodes(snapshot.nodes ?? []);
      }
    },
    async onEvent(event) {
      regions.refresh();
      if (event.event === "nodes") {
        const grown = unknownTo(event.nodes)
          || event.nodes.some((n) => n.cause === "loop_back" || n.cause === "dynamic_loop_back");
        if (grown) await graph.append(await fetchGraph());
        graph.updateNodes(event.nodes);
        nodePanel.nodesChanged(event.nodes);
      } else if (event.event === "nodes_appended") {
        await graph.append(await fetchGraph());
      }
    },
  });
}).catch((error) => {
  container.textContent = `The graph could not be loaded: ${error.message}`;
});
