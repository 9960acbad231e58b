// The run graph's side panel: one node's latest attempt — status, judgment, failure, every attempt,
// output, prompt and live log — kept true while the run moves.
//
// The panel is the server's (templates/console/_node_panel.html, from /runs/<id>/panel/?node=…): it is
// fetched whenever the run reports a change to its node (a new attempt, another status), the run's own
// status changes, or the node's log says the attempt finished, and swapped in whole. A fetch overtaken by
// a later one is dropped, so the panel ends on the latest facts; sections the reader unfolded stay open.
// An answer that says what the panel already shows leaves its elements as they are (a selection, a link
// being pressed), and a press under way inside the panel holds the swap until its release (press.js).
// Each answer handled counts up `data-answers` on the panel's body, so tests and people can tell it follows.
// The script's own part is the attempt's log, streamed into the list the server leaves at the panel's end.
import { connectLog } from "./live.js";
import { describeLine } from "./log-line.js";
import { afterPress, pressedWithin } from "./press.js";

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

/** Mount the panel on its elements; `panelUrl` is the run's panel address (the node's id goes in `?node=`). */
export function nodePanelMount({ panel, title, body, panelUrl }) {
  let nodeId = null;
  let shown = null; // {execId, status} of the attempt drawn
  let generation = 0;
  let log = null; // {execId, connection, list}
  let drawnWords = null; // the server's last panel drawn, as words()

  // A panel's markup with its form tokens left out: each answer masks the token afresh.
  function words(fresh) {
    const copy = fresh.cloneNode(true);
    for (const token of copy.querySelectorAll("input[name=csrfmiddlewaretoken]")) token.removeAttribute("value");
    return copy.outerHTML;
  }

  function logClose() {
    log?.connection.close();
    log = null;
  }

  // The attempt's log list: the one already streaming when the attempt is the same, so no line is lost.
  function logFor(execId, placeholder) {
    if (log?.execId !== execId) {
      logClose();
      const list = placeholder.cloneNode(false);
      const connection = connectLog(`/ws/node-executions/${execId}/log/?after=0`, {
        onLine(line) {
          list.append(el("li", {}, `${line.seq} ${(line.ts || "").slice(11, 23)} ${line.event} ${describeLine(line)}`));
          list.scrollTop = list.scrollHeight;
          if (line.event === "node_finished" && line.committed) refresh();
        },
      });
      log = { execId, connection, list };
    }
    placeholder.replaceWith(log.list);
  }

  function openSections() {
    return new Set([...body.querySelectorAll("details[data-section]")].filter((d) => d.open).map((d) => d.dataset.section));
  }

  function draw(fresh) {
    const open = openSections();
    body.replaceChildren(...[...fresh.childNodes].map((child) => document.importNode(child, true)));
    for (const details of body.querySelectorAll("details[data-section]")) {
      if (open.has(details.dataset.section)) details.open = true;
    }
    const placeholder = body.querySelector("ol[data-log-for]");
    if (placeholder) logFor(placeholder.dataset.logFor, placeholder);
    else logClose();
    title.textContent = fresh.dataset.title;
    shown = fresh.dataset.nodeExecId ? { execId: fresh.dataset.nodeExecId, status: fresh.dataset.state } : null;
    body.dataset.state = fresh.dataset.state;
  }

  async function refresh() {
    if (nodeId === null) return;
    const mine = ++generation;
    const url = new URL(panelUrl, window.location.href);
    url.searchParams.set("node", nodeId);
    let fresh;
    try {
      const response = await fetch(url, { credentials: "same-origin" });
      if (!response.ok) throw new Error(String(response.status));
      fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("node-panel");
    } catch {
      fresh = null;
    }
    if (mine !== generation) return;
    if (!fresh) {
      // The server could not be asked: say so, keeping what was drawn for when it answers again.
      body.dataset.state = "error";
      drawnWords = null;
      return;
    }
    if (fresh.dataset.nodeId !== nodeId) return;
    answered(fresh, mine);
  }

  function answered(fresh, mine) {
    if (mine !== generation) return;
    if (pressedWithin(body)) {
      body.dataset.waitsForRelease = "true";
      afterPress(() => answered(fresh, mine));
      return;
    }
    delete body.dataset.waitsForRelease;
    const said = words(fresh);
    if (said !== drawnWords) {
      draw(fresh);
      drawnWords = said;
    }
    body.dataset.answers = String(Number(body.dataset.answers || 0) + 1);
  }

  return {
    open(id) {
      panel.hidden = false;
      if (id !== nodeId) {
        logClose();
        shown = null;
        drawnWords = null;
        title.textContent = id;
        body.replaceChildren();
      }
      nodeId = id;
      return refresh();
    },
    close() {
      panel.hidden = true;
      nodeId = null;
      shown = null;
      drawnWords = null;
      generation += 1;
      logClose();
    },
    /** The run reported these attempts' states: fetch again when one is the panel's node and differs from what it shows. */
    nodesChanged(states) {
      if (nodeId === null) return;
      const mine = states.filter((state) => state.node_id === nodeId);
      if (mine.some((state) => !shown || state.node_exec_id !== shown.execId || state.status !== shown.status)) refresh();
    },
    /** The run's status changed (or a fresh snapshot came): what the panel shows may be stale. */
    runChanged() {
      if (nodeId !== null) refresh();
    },
  };
}
