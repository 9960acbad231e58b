// Node execution page: the live log, resumed after the last line the server rendered.
import { connectLog } from "./live.js";
import { describeLine } from "./log-line.js";

const list = document.getElementById("log-lines");
const pause = document.getElementById("pause-scroll");
const state = document.getElementById("log-state");

function appendLine(line) {
  const item = document.createElement("li");
  item.dataset.seq = String(line.seq);
  const seq = document.createElement("span");
  seq.className = "seq";
  seq.textContent = String(line.seq);
  const event = document.createElement("span");
  event.className = "event";
  event.textContent = line.event;
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = describeLine(line);
  item.append(seq, " ", event, " ", text);
  list.append(item);
  if (!pause.checked) list.scrollTop = list.scrollHeight;
}

if (list) {
  const after = Number(list.dataset.lastSeq || 0);
  if (list.dataset.open === "true" || after === 0) {
    connectLog(`${list.dataset.wsUrl}?after=${after}`, {
      after,
      onLine: appendLine,
      onEnd() { state.textContent = "log complete"; },
      onStatus(status) { state.textContent = status; },
    });
  } else {
    state.textContent = "log complete";
  }
}
