/**
 * The run graph's chrome: its toolbar (graph and timeline switch, zoom, fit, the flow direction, back
 * to all stages, the "n new nodes" hint, a note when the graph cannot fit legibly, a status line), the
 * stage it draws on, and the legend beside it. DOM calls only.
 */
import { createLegend } from "./legend.js";

/** Toolbar, stage (the drawing surface) and legend, built with DOM calls only. */
export function buildChrome(container, compact) {
  container.classList.add("dag");
  const root = document.createElement("div");
  root.className = compact ? "dag-root dag-root--compact" : "dag-root";
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
  const directionButton = button("⇅", "Flow: top-down. Switch to left to right");
  directionButton.classList.add("dag-direction");
  const backButton = button("← All stages", "Back to all stages", { hidden: true });
  const newNodes = button("", "Nodes were added outside the view: fit the drawing to show them", { hidden: true });
  newNodes.classList.add("dag-new-nodes");
  const status = document.createElement("span");
  status.className = "dag-status";
  status.setAttribute("role", "status");
  const fitNote = document.createElement("span");
  fitNote.className = "dag-fit-note";
  fitNote.hidden = true;
  toolbar.append(views, zoomOut, zoomIn, fitButton, directionButton, backButton, newNodes, fitNote, status);
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
  return {
    root, stage, status, fitNote, graphButton, timelineButton, zoomIn, zoomOut, fitButton, directionButton, backButton,
    newNodes,
  };
}

/**
 * Shows the flow direction on its button: the glyph of the drawing's, the label of the switch.
 * @param {HTMLButtonElement} button
 * @param {"DOWN" | "RIGHT"} direction
 */
export function showDirection(button, direction) {
  const down = direction !== "RIGHT";
  button.textContent = down ? "⇅" : "⇄";
  button.dataset.direction = direction;
  const label = down ? "Flow: top-down. Switch to left to right" : "Flow: left to right. Switch to top-down";
  button.title = label;
  button.setAttribute("aria-label", label);
}

/** Where the flow direction a user picked is kept: per signed-in user, in this browser. */
function directionKey() {
  const who = document.querySelector(".who");
  return `dag-direction:${who ? who.textContent.trim() : ""}`;
}

/** @returns {"DOWN" | "RIGHT" | null} the direction this user picked, or null (chosen per graph) */
export function directionPicked() {
  try {
    const value = localStorage.getItem(directionKey());
    return value === "DOWN" || value === "RIGHT" ? value : null;
  } catch {
    return null;
  }
}

/** @param {"DOWN" | "RIGHT"} direction  remembered for this user's next graphs */
export function directionRemember(direction) {
  try {
    localStorage.setItem(directionKey(), direction);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
}
