// Node execution page: the trace and the raw log, built from the lines the server sent with the page,
// then kept current from the live log, resumed after the last of those lines.
import { connectLog } from "./live.js";
import { describeLine } from "./log-line.js";
import { copyButtonBind, traceViewMount } from "./trace-view.js";

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

const resumeCopy = document.getElementById("resume-copy");
if (resumeCopy) copyButtonBind(resumeCopy, document.getElementById("resume-command"));

if (list) {
  const trace = traceViewMount({
    groupsRoot: document.getElementById("trace-groups"),
    header: document.getElementById("trace-header"),
    empty: document.getElementById("trace-empty"),
  });
  for (const line of JSON.parse(document.getElementById("trace-lines").textContent)) trace.add(line);
  const complete = () => {
    state.textContent = "log complete";
    trace.finish();
  };
  const after = Number(list.dataset.lastSeq || 0);
  if (list.dataset.follow === "true") {
    connectLog(`${list.dataset.wsUrl}?after=${after}`, {
      after,
      onLine(line) {
        appendLine(line);
        trace.add(line);
      },
      onEnd: complete,
      onStatus(status) { state.textContent = status; },
    });
  } else {
    complete();
  }
}
