// Unit tests of static/js/live.js with a fake WebSocket and hand-fired timers: `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { connectInbox, connectLog, connectRun } from "../../static/js/live.js";

class FakeSocket {
  static opened = [];

  constructor(url) {
    this.url = url;
    this.closedWith = null;
    FakeSocket.opened.push(this);
  }

  accept() {
    this.onopen?.({});
  }

  deliver(message) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }

  drop(code = 1006) {
    this.onclose?.({ code });
  }

  close(code) {
    this.closedWith = code;
  }
}

function harness() {
  FakeSocket.opened = [];
  const timers = [];
  const statuses = [];
  return {
    timers,
    statuses,
    transport: {
      WebSocket: FakeSocket,
      setTimer: (fn, ms) => timers.push({ fn, ms }) - 1,
      clearTimer: (handle) => {
        timers[handle].cancelled = true;
      },
      random: () => 0.5,
      onStatus: (status, detail) => statuses.push(detail ? [status, detail] : status),
    },
    fire() {
      const timer = timers.shift();
      assert.ok(timer && !timer.cancelled, "a reconnect was scheduled");
      timer.fn();
    },
    latest: () => FakeSocket.opened.at(-1),
  };
}

const line = (seq) => ({ type: "line", line: { seq, ts: "t", event: "agent_output", text: `line ${seq}` } });

test("a log resumes after the last seq it saw and drops lines it already has", () => {
  const h = harness();
  const seen = [];
  connectLog("ws://console.test/ws/node-executions/x/log/?after=2", { ...h.transport, onLine: (l) => seen.push(l.seq) });
  assert.equal(h.latest().url, "ws://console.test/ws/node-executions/x/log/?after=2");
  h.latest().accept();
  for (const seq of [3, 4, 4, 2]) h.latest().deliver(line(seq));
  h.latest().drop();
  h.fire();
  assert.equal(h.latest().url, "ws://console.test/ws/node-executions/x/log/?after=4");
  for (const seq of [4, 5]) h.latest().deliver(line(seq));
  assert.deepEqual(seen, [3, 4, 5]);
});

test("a burst in one lines frame is handled line by line, already seen lines dropped", () => {
  const h = harness();
  const seen = [];
  connectLog("ws://console.test/log/?after=1", { ...h.transport, onLine: (l) => seen.push(l.seq) });
  h.latest().accept();
  h.latest().deliver({ type: "lines", lines: [1, 2, 3].map((seq) => line(seq).line) });
  h.latest().deliver(line(3));
  h.latest().deliver({ type: "lines", lines: [3, 4].map((seq) => line(seq).line) });
  assert.deepEqual(seen, [2, 3, 4]);
});

test("reconnects back off exponentially up to ten seconds, and a working stream resets the delay", () => {
  const h = harness();
  connectLog("ws://console.test/log/", h.transport);
  for (let i = 0; i < 7; i += 1) {
    h.latest().drop();
    h.fire();
  }
  const delays = h.statuses.filter((s) => Array.isArray(s) && s[0] === "reconnecting").map(([, d]) => d.delay);
  assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 10000, 10000].map((ms) => ms * 0.875));
  h.latest().deliver(line(1));
  h.latest().drop();
  assert.equal(h.timers.at(-1).ms, 500 * 0.875);
});

test("the end of a log stops reconnecting", () => {
  const h = harness();
  let ended = null;
  connectLog("ws://console.test/log/", { ...h.transport, onEnd: (end) => { ended = end; } });
  h.latest().deliver({ type: "end", last_seq: 0 });
  h.latest().drop(1000);
  assert.deepEqual(ended, { type: "end", last_seq: 0 });
  assert.equal(h.timers.length, 0);
  assert.ok(h.statuses.includes("ended"));
});

test("a refused socket is not retried", () => {
  const h = harness();
  connectRun("ws://console.test/ws/runs/x/", h.transport);
  h.latest().accept();
  h.latest().drop(4404);
  assert.equal(h.timers.length, 0);
  assert.deepEqual(h.statuses.at(-1), ["refused", { code: 4404 }]);
});

test("a run connection hands over snapshots and events, and close() stops everything", () => {
  const h = harness();
  const snapshots = [];
  const events = [];
  const run = connectRun("https://console.test/ws/runs/x/", {
    ...h.transport,
    onSnapshot: (s) => snapshots.push(s.status),
    onEvent: (e) => events.push(e.event),
  });
  assert.equal(h.latest().url, "wss://console.test/ws/runs/x/");
  h.latest().deliver({ type: "snapshot", status: "running", nodes: [] });
  h.latest().deliver({ type: "event", event: { event: "progress", done: 1, total: 2 } });
  h.latest().drop();
  h.fire();
  h.latest().deliver({ type: "snapshot", status: "succeeded", nodes: [] });
  run.close();
  assert.equal(h.latest().closedWith, 1000);
  h.latest().drop(1000);
  assert.deepEqual(snapshots, ["running", "succeeded"]);
  assert.deepEqual(events, ["progress"]);
  assert.equal(h.timers.length, 0);
  assert.equal(h.statuses.at(-1), "closed");
});

test("close() during a back-off cancels the pending reconnect", () => {
  const h = harness();
  const log = connectLog("ws://console.test/log/", h.transport);
  h.latest().drop();
  log.close();
  assert.equal(h.timers[0].cancelled, true);
});

test("an inbox connection sends the count shown at each connect and hands over each change", () => {
  const h = harness();
  let shown = "2";
  let changes = 0;
  connectInbox("http://console.test/ws/inbox/", { ...h.transport, shown: () => shown, onChanged: () => { changes += 1; } });
  assert.equal(h.latest().url, "ws://console.test/ws/inbox/?count=2");
  h.latest().deliver({ type: "changed" });
  h.latest().deliver({ type: "snapshot" });
  assert.equal(changes, 1);
  shown = "3";
  h.latest().drop();
  h.fire();
  assert.equal(h.latest().url, "ws://console.test/ws/inbox/?count=3");
  shown = undefined;
  h.latest().drop();
  h.fire();
  assert.equal(h.latest().url, "ws://console.test/ws/inbox/", "a page showing no count sends none");
  h.latest().drop(4401);
  assert.deepEqual(h.statuses.at(-1), ["refused", { code: 4401 }]);
});

test("an inbox connection of a page following lists sends its runs' fingerprint and hands over each activity", () => {
  const h = harness();
  let fingerprint = "0a1b";
  const heard = [];
  connectInbox("http://console.test/ws/inbox/", {
    ...h.transport, shown: () => "0", activity: () => fingerprint,
    onChanged: () => heard.push("changed"), onActivity: () => heard.push("activity"),
  });
  assert.equal(h.latest().url, "ws://console.test/ws/inbox/?count=0&activity=0a1b");
  h.latest().deliver({ type: "activity" });
  h.latest().deliver({ type: "changed" });
  h.latest().deliver({ type: "activity" });
  assert.deepEqual(heard, ["activity", "changed", "activity"]);
  fingerprint = "ff00";
  h.latest().drop();
  h.fire();
  assert.equal(h.latest().url, "ws://console.test/ws/inbox/?count=0&activity=ff00", "the fingerprint shown now");
  fingerprint = undefined;
  h.latest().drop();
  h.fire();
  assert.equal(h.latest().url, "ws://console.test/ws/inbox/?count=0", "a page following no list sends none");
});
