/**
 * Live execution logs, run events and the inbox count over WebSockets (see console/consumers/__init__.py for
 * the protocol).
 *
 * The helpers connect, reconnect after a lost connection with exponential back-off (0.5 s doubling,
 * capped at 10 s, with jitter so many tabs do not return at once) and stop for good when the server
 * refuses the socket (close codes 4400 bad request, 4401 not signed in, 4404 not found) or, for a
 * log, once it said the log is complete. A log resumes with `?after=<last seq seen>`, and a line whose
 * seq was already seen is dropped, so a page gets every line exactly once across reconnects.
 *
 * Status callbacks receive one of: "connecting", "open", "reconnecting" (detail: {delay, attempt}),
 * "ended", "refused" (detail: {code}), "closed" (after `close()`).
 *
 * @example
 * const log = connectLog(`/ws/node-executions/${id}/log/`, { after: 0, onLine: (line) => show(line) });
 * log.close();
 */

const REFUSED_CODES = new Set([4400, 4401, 4404]);
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

/**
 * @typedef {object} LogLine  One JSONL line of an execution's log.
 * @property {number} seq     Position in the log, from 1, without gaps.
 * @property {string} ts      ISO timestamp.
 * @property {string} event   What happened: node_start, agent_output, node_finished…
 */

/**
 * @typedef {object} Connection
 * @property {() => void} close  Stop for good: close the socket and cancel any pending reconnect.
 */

/**
 * @typedef {object} TransportOptions  Seams for tests; pages leave them out.
 * @property {typeof WebSocket} [WebSocket]  Constructor to use instead of the browser's.
 * @property {(fn: () => void, ms: number) => any} [setTimer]  Defaults to setTimeout.
 * @property {(handle: any) => void} [clearTimer]  Defaults to clearTimeout.
 * @property {() => number} [random]  Defaults to Math.random (the back-off jitter).
 */

/**
 * Follow one execution's log: the lines after `after`, then live lines, until the log is complete.
 *
 * @param {string} url  `/ws/node-executions/<id>/log/`, relative to the page or absolute (ws:, wss:, http:, https:).
 *   An `after` already in its query string is the starting point unless `options.after` is given.
 * @param {{onLine?: (line: LogLine) => void, onEnd?: (end: {last_seq: number}) => void,
 *   onStatus?: (status: string, detail?: object) => void, after?: number} & TransportOptions} [options]
 * @returns {Connection & {readonly lastSeq: number}}
 */
export function connectLog(url, { onLine, onEnd, onStatus, after, ...transport } = {}) {
  const base = toSocketUrl(url);
  let lastSeq = after ?? (Number(base.searchParams.get("after")) || 0);
  const stream = reconnecting({
    url() {
      base.searchParams.set("after", String(lastSeq));
      return base.href;
    },
    onMessage(message) {
      // A burst comes as one `lines` frame; each line is handled as if it had come alone.
      const lines = message.type === "line" ? [message.line] : message.type === "lines" ? message.lines : [];
      for (const line of lines) {
        if (line.seq <= lastSeq) continue;
        lastSeq = line.seq;
        onLine?.(line);
      }
      if (message.type === "end") {
        stream.finish("ended");
        onEnd?.(message);
      }
    },
    onStatus,
    transport,
  });
  return {
    close: stream.close,
    get lastSeq() {
      return lastSeq;
    },
  };
}

/**
 * Follow one run: a snapshot on every (re)connect, then each run event as it happens.
 *
 * @param {string} url  `/ws/runs/<id>/`, relative to the page or absolute.
 * @param {{onSnapshot?: (snapshot: object) => void, onEvent?: (event: object) => void,
 *   onStatus?: (status: string, detail?: object) => void} & TransportOptions} [options]
 * @returns {Connection}
 */
export function connectRun(url, { onSnapshot, onEvent, onStatus, ...transport } = {}) {
  const target = toSocketUrl(url).href;
  const stream = reconnecting({
    url: () => target,
    onMessage(message) {
      if (message.type === "snapshot") onSnapshot?.(message);
      else if (message.type === "event") onEvent?.(message.event);
    },
    onStatus,
    transport,
  });
  return { close: stream.close };
}

/**
 * Follow the signed-in person's inbox: `onChanged()` whenever their count is not the one the page shows,
 * and, for a page that follows lists, `onActivity()` whenever a run of their projects moved as a list shows.
 *
 * @param {string} url  `/ws/inbox/`, relative to the page or absolute.
 * @param {{shown?: () => string | undefined, activity?: () => string | undefined, onChanged?: () => void,
 *   onActivity?: () => void, onStatus?: (status: string, detail?: object) => void} & TransportOptions} [options]
 *   `shown()` is the count the page shows now, as the server rendered it: every (re)connect sends it as
 *   `?count=`, so a count that moved meanwhile is said at once (none sent: it is said anyway).
 *   `activity()` is the fingerprint of the person's runs the page's lists were rendered with, sent as
 *   `?activity=` the same way; a page that sends none follows no list and is told of no activity.
 * @returns {Connection}
 */
export function connectInbox(url, { shown, activity, onChanged, onActivity, onStatus, ...transport } = {}) {
  const base = toSocketUrl(url);
  const stream = reconnecting({
    url() {
      for (const [name, value] of [["count", shown?.()], ["activity", activity?.()]]) {
        if (value === undefined) base.searchParams.delete(name);
        else base.searchParams.set(name, value);
      }
      return base.href;
    },
    onMessage(message) {
      if (message.type === "changed") onChanged?.();
      else if (message.type === "activity") onActivity?.();
    },
    onStatus,
    transport,
  });
  return { close: stream.close };
}

/**
 * Keep one /ws/runs/<id>/ socket open for each run listed under `selector` (rows carrying data-run-id)
 * and none for any other run: call `follow()` whenever the list may have changed.
 *
 * @param {string} selector
 * @param {(runId: string) => object} handlersFor  a new socket's `connectRun` options
 * @returns {{follow: () => void, forget: (runId: string) => void}}  `forget` closes a run's socket early
 */
export function listedRunsFollowed(selector, handlersFor) {
  const followed = new Map();

  function forget(runId) {
    followed.get(runId)?.close();
    followed.delete(runId);
  }

  function follow() {
    const listed = new Set([...document.querySelectorAll(selector)].map((row) => row.dataset.runId));
    for (const runId of [...followed.keys()]) {
      if (!listed.has(runId)) forget(runId);
    }
    for (const runId of listed) {
      if (!followed.has(runId)) followed.set(runId, connectRun(`/ws/runs/${runId}/`, handlersFor(runId)));
    }
  }

  return { follow, forget };
}

function reconnecting({ url, onMessage, onStatus, transport }) {
  const Socket = transport.WebSocket ?? globalThis.WebSocket;
  const setTimer = transport.setTimer ?? setTimeout;
  const clearTimer = transport.clearTimer ?? clearTimeout;
  const random = transport.random ?? Math.random;
  let socket = null;
  let timer = null;
  let failures = 0;
  let stopped = false;

  function report(status, detail) {
    onStatus?.(status, detail);
  }

  function open() {
    timer = null;
    report("connecting");
    const current = new Socket(url());
    socket = current;
    current.onopen = () => report("open");
    current.onmessage = (event) => {
      if (current !== socket) return;
      // A message proves the stream works (an accepted socket may still be refused right after).
      failures = 0;
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      onMessage(message);
    };
    current.onclose = (event) => {
      if (current !== socket) return;
      socket = null;
      if (stopped) return;
      if (REFUSED_CODES.has(event.code)) {
        stopped = true;
        report("refused", { code: event.code });
        return;
      }
      const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** failures) * (0.75 + random() / 4);
      failures += 1;
      report("reconnecting", { delay, attempt: failures });
      timer = setTimer(open, delay);
    };
  }

  function stop(status) {
    if (stopped) return;
    stopped = true;
    if (timer !== null) clearTimer(timer);
    timer = null;
    report(status);
  }

  open();
  return {
    finish: stop,
    close() {
      const current = socket;
      stop("closed");
      socket = null;
      current?.close(1000);
    },
  };
}

function toSocketUrl(url) {
  const resolved = new URL(url, globalThis.location?.href);
  if (resolved.protocol === "http:") resolved.protocol = "ws:";
  if (resolved.protocol === "https:") resolved.protocol = "wss:";
  return resolved;
}
