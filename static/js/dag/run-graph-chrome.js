/**
 * The run graph's chrome: its toolbar (graph and timeline switch, zoom, fit, back to all stages, the
 * "n new nodes" hint, a status line), the stage it draws on, and the legend beside it. DOM calls only.
 */
import { createLegend } from "./legend.js";

/** Toolbar, stage (the drawing surface) and legend, built with DOM calls only. */
export function buildChrome(container, compact) {
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
