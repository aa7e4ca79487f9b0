import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  ProtocolError,
  SessionWindow,
  parseHistory,
} from "../../host/dsh/web/static/session-window.js";
import { FakeServer, FakeTimers, seeded, tick, viewOf } from "./fake-server.mjs";

// ---- a hand-driven harness for the single-rule tests ---------------------

function ev(seq, text = `m${seq}`, type = "message/user") {
  return { seq, type, time: 1000 + seq, data: { text, source: { kind: "user" } } };
}

function dispatch(seq, id = `r${seq}`) {
  return { seq, type: "schedule/change", time: 1000 + seq, data: { op: "dispatch", id } };
}

function history(events, { views = {}, tail } = {}) {
  return {
    header: { id: "s1" },
    events,
    views,
    attached: true,
    tail: tail ?? (events.length > 0 ? events.at(-1).seq + 1 : 0),
  };
}

function harness({ live = true, limit = 50, backoff = { baseMs: 100, maxMs: 800 } } = {}) {
  const requests = [];
  const conns = [];
  const timers = new FakeTimers();
  const win = new SessionWindow({
    fetchEvents: (params) =>
      new Promise((resolve, reject) => requests.push({ params, resolve, reject })),
    openLive: (handlers) => {
      const conn = { handlers, closed: false };
      conns.push(conn);
      return {
        close() {
          conn.closed = true;
        },
      };
    },
    live,
    limit,
    timers,
    backoff,
  });
  const h = {
    win,
    requests,
    conns,
    timers,
    /** Send a frame on the newest connection. */
    frame(frame) {
      conns.at(-1).handlers.onFrame(structuredClone(frame));
    },
    event(event, view) {
      h.frame(view === undefined ? { kind: "event", event } : { kind: "event", event, sidecar: { for: "event", view } });
    },
    /** Resolve the oldest outstanding request (or the one at `index`). */
    async respond(body, index = 0) {
      const [request] = requests.splice(index, 1);
      request.resolve(structuredClone(body));
      await tick();
      return request;
    },
    async reject(error, index = 0) {
      const [request] = requests.splice(index, 1);
      request.reject(error);
      await tick();
      return request;
    },
    seqs() {
      return win.snapshot().events.map((event) => event.seq);
    },
    views() {
      return Object.fromEntries(win.snapshot().views);
    },
  };
  return h;
}

async function loaded(h, events, options) {
  h.win.start();
  h.frame({ kind: "hello", tail: options?.tail ?? (events.at(-1)?.seq + 1 || 0) });
  assert.equal(h.requests[0].params.before, undefined);
  assert.equal(h.requests[0].params.from, undefined);
  await h.respond(history(events, options));
  return h;
}

function range(lo, hi, make = ev) {
  return Array.from({ length: hi - lo }, (_, i) => make(lo + i));
}

// ---- the rules -------------------------------------------------------------

describe("session window: loading the tail", () => {
  test("the tail page is requested only after hello and installs events and views", async () => {
    const h = harness();
    h.win.start();
    assert.equal(h.win.status, "connecting");
    assert.equal(h.requests.length, 0, "no history before the stream is subscribed");
    h.frame({ kind: "hello", tail: 3 });
    assert.deepEqual(h.requests[0].params, { limit: 50 });
    await h.respond(history([ev(0), ev(1), dispatch(2)], { views: { 2: { ok: 1 } } }));
    const snap = h.win.snapshot();
    assert.equal(snap.status, "live");
    assert.deepEqual(h.seqs(), [0, 1, 2]);
    assert.deepEqual(h.views(), { 2: { ok: 1 } });
    assert.deepEqual(snap.header, { id: "s1" });
  });

  test("views in a history response attach only to events it returned", () => {
    const page = parseHistory(history([ev(4), ev(5)], { views: { 4: { a: 1 }, 9: { b: 2 }, x: {} } }));
    assert.deepEqual([...page.views], [[4, { a: 1 }]]);
  });

  test("live events that arrive during the tail load wait in the buffer and merge", async () => {
    const h = harness();
    h.win.start();
    h.frame({ kind: "hello", tail: 2 });
    h.event(ev(2));
    h.event(ev(3));
    assert.equal(h.win.snapshot().buffered, 2);
    await h.respond(history([ev(0), ev(1), ev(2)]));
    assert.deepEqual(h.seqs(), [0, 1, 2, 3]);
    assert.equal(h.win.snapshot().buffered, 0);
    assert.equal(h.requests.length, 0, "no repair: nothing is missing");
  });

  test("a buffered event below the installed page is dropped, not kept", async () => {
    const h = harness({ limit: 2 });
    h.win.start();
    h.frame({ kind: "hello", tail: 4 });
    h.event(dispatch(1), { late: true });
    await h.respond(history([ev(2), ev(3)]));
    assert.deepEqual(h.seqs(), [2, 3]);
    assert.deepEqual(h.views(), {});
    assert.equal(h.win.snapshot().buffered, 0);
  });

  test("a live event at hi extends the window", async () => {
    const h = await loaded(harness(), [ev(0)]);
    h.event(ev(1));
    assert.deepEqual(h.seqs(), [0, 1]);
  });
});

describe("session window: repeated seq", () => {
  test("a deeply identical repeat is a no-op, whatever the key order", async () => {
    const h = await loaded(harness(), [ev(0), ev(1)]);
    const { data, time, type, seq } = ev(1);
    h.event({ data, time, type, seq });
    assert.deepEqual(h.seqs(), [0, 1]);
    assert.equal(h.win.stats().resyncs, 0);
  });

  test("a repeat carrying a sidecar upgrades the event with its view in place", async () => {
    const h = await loaded(harness(), [ev(0), dispatch(1)]);
    h.event(dispatch(1), { scheduleId: "r1" });
    assert.deepEqual(h.seqs(), [0, 1]);
    assert.deepEqual(h.views(), { 1: { scheduleId: "r1" } });
  });

  test("a sidecar for a buffered event attaches when it drains", async () => {
    const h = await loaded(harness(), [ev(0)], { tail: 1 });
    h.event(dispatch(2));
    h.event(dispatch(2), { v: 2 });
    assert.deepEqual(h.seqs(), [0]);
    h.event(ev(1));
    assert.deepEqual(h.seqs(), [0, 1, 2]);
    assert.deepEqual(h.views(), { 2: { v: 2 } });
  });

  test("a repeat with a different event is an identity conflict: full resync", async () => {
    const h = await loaded(harness(), [ev(0), ev(1)]);
    h.event(ev(1, "something else"));
    assert.equal(h.win.stats().resyncs, 1);
    assert.equal(h.conns[0].closed, true, "the old stream is closed");
    assert.equal(h.conns.length, 2, "a new stream is opened at once, without backoff");
    assert.equal(h.timers.pending.size, 0);
    assert.equal(h.win.loaded, false);
    h.frame({ kind: "hello", tail: 2 });
    await h.respond(history([ev(0), ev(1, "something else")]));
    assert.equal(h.win.snapshot().events[1].data.text, "something else");
  });

  test("a different event buffered twice at one seq is a conflict too", async () => {
    const h = harness();
    h.win.start();
    h.frame({ kind: "hello", tail: 0 });
    h.event(ev(0));
    h.event(ev(0, "other"));
    assert.equal(h.win.stats().resyncs, 1);
  });

  test("the tail page disagreeing with a buffered event is a conflict", async () => {
    const h = harness();
    h.win.start();
    h.frame({ kind: "hello", tail: 1 });
    h.event(ev(1));
    await h.respond(history([ev(0), ev(1, "other")]));
    assert.equal(h.win.stats().resyncs, 1);
    assert.equal(h.win.loaded, false);
  });
});

describe("session window: gaps", () => {
  test("an event beyond a gap waits in the buffer and a from= repair fills the gap", async () => {
    const h = await loaded(harness(), [ev(0), ev(1)]);
    h.event(ev(4));
    assert.deepEqual(h.seqs(), [0, 1]);
    assert.deepEqual(h.requests[0].params, { from: 2, limit: 50 });
    await h.respond(history([ev(2), ev(3), ev(4)], { tail: 5 }));
    assert.deepEqual(h.seqs(), [0, 1, 2, 3, 4]);
    assert.equal(h.win.snapshot().buffered, 0);
    assert.equal(h.requests.length, 0);
  });

  test("a repair that advanced but left a buffered gap pulls again", async () => {
    const h = await loaded(harness({ limit: 2 }), [ev(0)]);
    h.event(ev(6));
    assert.deepEqual(h.requests[0].params, { from: 1, limit: 2 });
    await h.respond(history([ev(1), ev(2)], { tail: 7 }));
    assert.deepEqual(h.requests[0].params, { from: 3, limit: 2 });
    await h.respond(history([ev(3), ev(4)], { tail: 7 }));
    assert.deepEqual(h.requests[0].params, { from: 5, limit: 2 });
    await h.respond(history([ev(5), ev(6)], { tail: 7 }));
    assert.deepEqual(h.seqs(), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(h.requests.length, 0);
    assert.equal(h.win.stats().repairs, 3);
  });

  test("live events keep landing while a repair is in flight", async () => {
    const h = await loaded(harness(), [ev(0)]);
    h.event(ev(2));
    h.event(ev(3));
    await h.respond(history([ev(1), ev(2)], { tail: 3 }));
    assert.deepEqual(h.seqs(), [0, 1, 2, 3]);
    assert.equal(h.requests.length, 0);
  });

  test("hi below the hello tail after the load starts a repair", async () => {
    const h = harness();
    h.win.start();
    h.frame({ kind: "hello", tail: 5 });
    await h.respond(history([ev(0), ev(1), ev(2)], { tail: 3 }));
    assert.deepEqual(h.requests[0].params, { from: 3, limit: 50 });
    await h.respond(history([ev(3), ev(4)]));
    assert.deepEqual(h.seqs(), [0, 1, 2, 3, 4]);
  });

  test("a repair response that disagrees with the window is a conflict", async () => {
    const h = await loaded(harness(), [ev(0), ev(1)]);
    h.event(ev(3));
    h.event(ev(2));
    assert.deepEqual(h.seqs(), [0, 1, 2, 3], "the live stream closed the gap first");
    await h.respond(history([ev(2, "changed"), ev(3)], { tail: 4 }));
    assert.equal(h.win.stats().resyncs, 1);
  });

  test("a repair whose tail is below the window is a conflict", async () => {
    const h = await loaded(harness(), [ev(0), ev(1), ev(2)]);
    h.event(ev(4));
    await h.respond(history([], { tail: 1 }));
    assert.equal(h.win.stats().resyncs, 1);
  });

  test("a repair that makes no progress gives up and reconnects with backoff", async () => {
    const h = await loaded(harness(), [ev(0)]);
    h.event(ev(2));
    await h.respond(history([], { tail: 1 }));
    assert.equal(h.win.status, "reconnecting");
    assert.equal(h.win.snapshot().error.code, "protocol");
    assert.deepEqual(h.timers.delays, [100]);
  });

  test("a malformed repair response reconnects", async () => {
    const h = await loaded(harness(), [ev(0)]);
    h.event(ev(2));
    await h.respond(history([ev(5)], { tail: 6 }));
    assert.equal(h.win.status, "reconnecting");
  });
});

describe("session window: older pages", () => {
  test("an older page is prepended while the live tail keeps arriving", async () => {
    const h = await loaded(harness({ limit: 2 }), [ev(4), ev(5)]);
    const older = h.win.loadOlder();
    assert.deepEqual(h.requests[0].params, { before: 4, limit: 2 });
    assert.equal(h.win.snapshot().loadingOlder, true);
    h.event(ev(6));
    h.event(ev(7));
    assert.deepEqual(h.seqs(), [4, 5, 6, 7], "the tail lands in the current arrays");
    await h.respond(history([ev(2), dispatch(3)], { views: { 3: { v: 3 } }, tail: 8 }));
    assert.equal(await older, true);
    assert.deepEqual(h.seqs(), [2, 3, 4, 5, 6, 7]);
    assert.deepEqual(h.views(), { 3: { v: 3 } });
    assert.equal(h.win.snapshot().loadingOlder, false);
    assert.equal(h.win.snapshot().hasOlder, true);
  });

  test("only one page is in flight, and none at the start of the log", async () => {
    const h = await loaded(harness(), [ev(3)]);
    h.win.loadOlder();
    assert.equal(await h.win.loadOlder(), false);
    assert.equal(h.requests.length, 1);
    await h.respond(history([ev(0), ev(1), ev(2)], { tail: 4 }));
    assert.equal(h.win.snapshot().hasOlder, false);
    assert.equal(await h.win.loadOlder(), false);
  });

  test("a sidecar below the window is held with the page and attaches to the identical event", async () => {
    const h = await loaded(harness({ limit: 2 }), [ev(2), ev(3)]);
    const older = h.win.loadOlder();
    h.event(dispatch(1), { v: 1 });
    assert.deepEqual(h.views(), {}, "nothing to attach to yet");
    await h.respond(history([ev(0), dispatch(1)], { tail: 4 }));
    await older;
    assert.deepEqual(h.views(), { 1: { v: 1 } });
  });

  test("a held sidecar whose page returns a different event causes a resync", async () => {
    const h = await loaded(harness({ limit: 2 }), [ev(2), ev(3)]);
    const older = h.win.loadOlder();
    h.event(dispatch(1, "a"), { v: 1 });
    await h.respond(history([ev(0), dispatch(1, "b")], { tail: 4 }));
    assert.equal(await older, false);
    assert.equal(h.win.stats().resyncs, 1);
  });

  test("a held sidecar outside the returned page is dropped", async () => {
    const h = await loaded(harness({ limit: 1 }), [ev(3)]);
    const older = h.win.loadOlder();
    h.event(dispatch(0), { v: 0 });
    await h.respond(history([ev(2)], { tail: 4 }));
    await older;
    assert.deepEqual(h.views(), {});
    assert.equal(h.win.stats().resyncs, 0);
  });

  test("a sidecar below the window with no page in flight is ignored", async () => {
    const h = await loaded(harness(), [ev(5)]);
    h.event(dispatch(2), { v: 2 });
    h.event(ev(1));
    assert.deepEqual(h.seqs(), [5]);
    assert.deepEqual(h.views(), {});
    assert.equal(h.requests.length, 0);
  });

  test("a page that does not end just below the window is a conflict", async () => {
    const h = await loaded(harness(), [ev(5)]);
    const older = h.win.loadOlder();
    await h.respond(history([ev(1), ev(2)], { tail: 6 }));
    assert.equal(await older, false);
    assert.equal(h.win.stats().resyncs, 1);
  });

  test("a failed page leaves the window as it was and records the error", async () => {
    const h = await loaded(harness(), [ev(5)]);
    const older = h.win.loadOlder();
    await h.reject(Object.assign(new Error("offline"), { status: 0 }));
    assert.equal(await older, false);
    const snap = h.win.snapshot();
    assert.deepEqual(h.seqs(), [5]);
    assert.equal(snap.loadingOlder, false);
    assert.equal(snap.error.message, "offline");
    assert.equal(snap.status, "live");
  });

  test("a malformed page reconnects", async () => {
    const h = await loaded(harness(), [ev(5)]);
    const older = h.win.loadOlder();
    await h.respond({ events: "nope" });
    assert.equal(await older, false);
    assert.equal(h.win.status, "reconnecting");
  });
});

describe("session window: reconnect generations", () => {
  test("a closed stream reconnects with doubling, capped backoff that resets on load", async () => {
    const h = await loaded(harness(), [ev(0)]);
    for (let i = 0; i < 5; i += 1) {
      h.conns.at(-1).handlers.onClose({ code: 1006 });
      assert.equal(h.win.status, "reconnecting");
      h.timers.fireAll();
    }
    assert.deepEqual(h.timers.delays, [100, 200, 400, 800, 800]);
    assert.equal(h.conns.length, 6);
    h.frame({ kind: "hello", tail: 1 });
    await h.respond(history([ev(0)]));
    assert.equal(h.win.status, "live");
    h.conns.at(-1).handlers.onClose({ code: 1006 });
    assert.equal(h.timers.delays.at(-1), 100);
  });

  test("the rebuilt window keeps showing the old events until the new tail lands", async () => {
    const h = await loaded(harness(), [ev(0), ev(1)]);
    h.conns[0].handlers.onClose({});
    assert.deepEqual(h.seqs(), [0, 1]);
    assert.equal(h.win.loaded, false);
    h.timers.fireAll();
    h.frame({ kind: "hello", tail: 3 });
    await h.respond(history([ev(1), ev(2)], { tail: 3 }));
    assert.deepEqual(h.seqs(), [1, 2]);
  });

  test("stale page, repair and tail results never touch the rebuilt window", async () => {
    const h = await loaded(harness({ limit: 2 }), [ev(4), ev(5)]);
    h.win.loadOlder(); // request 0: generation 1 page
    h.event(ev(8)); // request 1: generation 1 repair
    h.conns[0].handlers.onClose({});
    h.timers.fireAll();
    h.frame({ kind: "hello", tail: 9 });
    // request 2: the new generation's tail load
    await h.respond(history([ev(7), ev(8)], { tail: 9 }), 2);
    const page = h.win.loadOlder(); // request 2 again: the new page
    assert.equal(h.win.snapshot().loadingOlder, true);
    await h.respond(history([ev(2), ev(3)], { tail: 9 }), 0);
    await h.respond(history([ev(6), ev(7), ev(8)], { tail: 9 }), 0);
    let snap = h.win.snapshot();
    assert.deepEqual(h.seqs(), [7, 8], "stale results were ignored");
    assert.equal(snap.loadingOlder, true, "a stale finally did not clear the new page");
    assert.equal(snap.buffered, 0);
    await h.respond(history([ev(5), ev(6)], { tail: 9 }), 0);
    assert.equal(await page, true);
    snap = h.win.snapshot();
    assert.deepEqual(h.seqs(), [5, 6, 7, 8]);
    assert.equal(snap.loadingOlder, false);
  });

  test("a stale repair from another lifecycle is ignored, not merged into the new window", async () => {
    const h = await loaded(harness(), [ev(4), ev(5)]);
    h.event(ev(8)); // request 0: a repair from=6 in generation 1
    assert.deepEqual(h.requests[0].params.from, 6);
    h.conns[0].handlers.onClose({});
    h.timers.fireAll();
    h.frame({ kind: "hello", tail: 7 });
    await h.respond(history([ev(5), ev(6, "after restart")]), 1);
    await h.respond(history([ev(6), ev(7), ev(8)], { tail: 9 }), 0);
    assert.deepEqual(h.seqs(), [5, 6]);
    assert.equal(h.win.snapshot().events[1].data.text, "after restart");
    assert.equal(h.win.stats().resyncs, 0);
    assert.equal(h.win.snapshot().buffered, 0);
  });

  test("a stale tail load is ignored after a resync", async () => {
    const h = harness();
    h.win.start();
    h.frame({ kind: "hello", tail: 1 });
    h.win.resync();
    h.frame({ kind: "hello", tail: 1 });
    await h.respond(history([ev(0, "stale")]), 0);
    assert.equal(h.win.loaded, false);
    await h.respond(history([ev(0)]), 0);
    assert.equal(h.win.snapshot().events[0].data.text, "m0");
  });

  test("frames from a replaced stream are ignored", async () => {
    const h = await loaded(harness(), [ev(0)]);
    const old = h.conns[0];
    old.handlers.onClose({});
    h.timers.fireAll();
    old.handlers.onFrame({ kind: "event", event: ev(1) });
    old.handlers.onClose({});
    assert.equal(h.win.snapshot().buffered, 0);
    assert.equal(h.timers.pending.size, 0, "no second reconnect scheduled");
  });

  test("a failed tail load reconnects; 404 stops for good", async () => {
    const h = harness();
    h.win.start();
    h.frame({ kind: "hello", tail: 0 });
    await h.reject(Object.assign(new Error("boom"), { status: 500 }));
    assert.equal(h.win.status, "reconnecting");
    assert.equal(h.conns[0].closed, true);
    h.timers.fireAll();
    h.frame({ kind: "hello", tail: 0 });
    await h.reject(Object.assign(new Error("gone"), { status: 404 }));
    assert.equal(h.win.status, "failed");
    assert.equal(h.win.snapshot().error.status, 404);
    assert.equal(h.timers.pending.size, 0);
  });

  test("a malformed tail page reconnects with a protocol error", async () => {
    const h = harness();
    h.win.start();
    h.frame({ kind: "hello", tail: 2 });
    await h.respond({ events: [ev(0), ev(2)], tail: 3, views: {} });
    assert.equal(h.win.status, "reconnecting");
    assert.equal(h.win.snapshot().error.code, "protocol");
  });

  test("openLive throwing counts as a failed connection", () => {
    const timers = new FakeTimers();
    const win = new SessionWindow({
      fetchEvents: async () => history([]),
      openLive: () => {
        throw new Error("no sockets");
      },
      timers,
    });
    win.start();
    assert.equal(win.status, "reconnecting");
    assert.equal(timers.pending.size, 1);
  });

  test("a stream that reports its close while opening is closed and retried", () => {
    const timers = new FakeTimers();
    let closed = 0;
    const win = new SessionWindow({
      fetchEvents: async () => history([]),
      openLive: ({ onClose }) => {
        onClose({ code: 1006 });
        return {
          close() {
            closed += 1;
          },
        };
      },
      timers,
    });
    win.start();
    assert.equal(closed, 1, "the handle that came back after its close is closed");
    assert.equal(win.status, "reconnecting");
    assert.equal(timers.pending.size, 1);
  });

  test("a stream refused before its hello is asked about over HTTP: a 404 stops it", async () => {
    const timers = new FakeTimers();
    let opened = 0;
    const gone = Object.assign(new Error("no such session"), { status: 404 });
    const win = new SessionWindow({
      fetchEvents: async () => {
        throw gone;
      },
      openLive: ({ onClose }) => {
        opened += 1;
        queueMicrotask(() => onClose({ code: 1006 }));
        return { close() {} };
      },
      timers,
    });
    win.start();
    for (let i = 0; i < 5; i += 1) await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(win.status, "failed");
    assert.equal(win.snapshot().error.status, 404);
    assert.equal(timers.pending.size, 0, "no reconnect is left waiting");
    assert.equal(opened, 1);
  });

  test("a stream that closed before its hello still reconnects when HTTP answers", async () => {
    const timers = new FakeTimers();
    const win = new SessionWindow({
      fetchEvents: async () => history([]),
      openLive: ({ onClose }) => {
        queueMicrotask(() => onClose({ code: 1006 }));
        return { close() {} };
      },
      timers,
    });
    win.start();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(win.status, "reconnecting");
    assert.equal(timers.pending.size, 1);
  });

  test("a handle whose close() throws is dropped all the same", async () => {
    const timers = new FakeTimers();
    const opened = [];
    const win = new SessionWindow({
      fetchEvents: () => new Promise(() => {}),
      openLive: (handlers) => {
        opened.push(handlers);
        return {
          close() {
            throw new Error("already dead");
          },
        };
      },
      timers,
    });
    win.start();
    win.resync();
    assert.equal(opened.length, 2);
    win.close();
    assert.equal(win.status, "closed");
  });

  test("a window without openLive cannot go live", () => {
    const win = new SessionWindow({ fetchEvents: async () => history([]), live: false });
    assert.throws(() => win.setLive(true), TypeError);
    win.setLive(false);
    assert.equal(win.status, "idle");
  });

  test("close() drops the stream, the timers and every later result", async () => {
    const h = await loaded(harness(), [ev(3)]);
    const page = h.win.loadOlder();
    h.win.close();
    assert.equal(h.conns[0].closed, true);
    assert.equal(h.win.status, "closed");
    h.frame({ kind: "event", event: ev(4) });
    await h.respond(history([ev(0), ev(1), ev(2)], { tail: 4 }));
    assert.equal(await page, false);
    assert.deepEqual(h.seqs(), [3]);
    h.win.start();
    assert.equal(h.conns.length, 1, "a closed window does not start again");
  });
});

describe("session window: cold sessions, streaming text, listeners", () => {
  test("a cold window reads history without a stream, then goes live on demand", async () => {
    const h = harness({ live: false });
    h.win.start();
    assert.equal(h.conns.length, 0);
    assert.equal(h.win.status, "loading");
    await h.respond(history([ev(0), ev(1)]));
    assert.equal(h.win.status, "cold");
    assert.deepEqual(h.seqs(), [0, 1]);
    h.win.setLive(true);
    assert.equal(h.conns.length, 1);
    h.frame({ kind: "hello", tail: 3 });
    await h.respond(history([ev(0), ev(1), ev(2)]));
    assert.equal(h.win.status, "live");
    assert.deepEqual(h.seqs(), [0, 1, 2]);
  });

  test("delta frames grow the typing text until the assistant message arrives", async () => {
    const h = await loaded(harness(), [ev(0)]);
    h.frame({ kind: "delta", text: "Hel" });
    h.frame({ kind: "delta", text: "lo" });
    assert.equal(h.win.snapshot().streaming, "Hello");
    h.event(dispatch(1), { v: 1 });
    assert.equal(h.win.snapshot().streaming, "Hello", "a sidecar resend is not the answer");
    h.event({ seq: 2, type: "message/assistant", time: 3, data: { text: "Hello", toolCalls: [] } });
    assert.equal(h.win.snapshot().streaming, "");
    h.frame({ kind: "delta", text: "x" });
    h.conns[0].handlers.onClose({});
    assert.equal(h.win.snapshot().streaming, "", "typing text never outlives its stream");
  });

  test("a listener that throws does not break the window", async () => {
    const errors = [];
    const win = new SessionWindow({
      fetchEvents: async () => history([ev(0)]),
      live: false,
      onListenerError: (err) => errors.push(err.message),
    });
    let calls = 0;
    const unsubscribe = win.subscribe(() => {
      calls += 1;
      throw new Error("listener bug");
    });
    win.start();
    await tick();
    assert.equal(win.status, "cold");
    assert.ok(calls > 0);
    assert.ok(errors.includes("listener bug"));
    unsubscribe();
    const before = calls;
    win.close();
    assert.equal(calls, before);
  });

  test("constructor arguments are checked", () => {
    assert.throws(() => new SessionWindow({}), TypeError);
    assert.throws(() => new SessionWindow({ fetchEvents: async () => ({}) }), TypeError);
    assert.throws(
      () => new SessionWindow({ fetchEvents: async () => ({}), live: false, limit: 501 }),
      RangeError,
    );
  });

  test("parseHistory rejects bodies that break the contract", () => {
    assert.equal(parseHistory(null), null);
    assert.equal(parseHistory({ events: [], tail: -1 }), null);
    assert.equal(parseHistory({ events: [ev(0), ev(2)], tail: 3 }), null);
    assert.equal(parseHistory({ events: [ev(0)], tail: 0 }), null, "tail below the events");
    assert.equal(parseHistory({ events: [{ seq: "0" }], tail: 1 }), null);
    assert.equal(parseHistory({ events: [], tail: 0, views: [] }), null);
    assert.ok(parseHistory({ events: [], tail: 0, views: null }));
    assert.ok(new ProtocolError("x") instanceof Error);
  });

});

// ---- snapshot plus events equals a fresh fetch (STYLE §13) -----------------

const EVENT_KINDS = [
  (server, random) => ["message/user", { text: `u${server.log.length}`, source: { kind: "user" } }],
  (server, random) => [
    "message/assistant",
    {
      text: `a${server.log.length}`,
      toolCalls: random() < 0.4 ? [{ id: `c${server.log.length}`, name: "t", arguments: { n: 1 } }] : [],
    },
  ],
  (server) => ["tool/result", { callId: `c${server.log.length - 1}`, name: "t", value: { ok: true } }],
  (server, random) => ["turn/end", random() < 0.8 ? { status: "ok" } : { status: "error", error: { code: "model", message: "x" } }],
  (server) => ["schedule/change", { op: "create", id: `r${server.log.length}` }],
  (server) => ["schedule/change", { op: "dispatch", id: `r${server.log.length}` }],
  (server) => ["note/pin", { text: `pin ${server.log.length}` }],
];

function pick(random, items) {
  return items[Math.floor(random() * items.length)];
}

function appendRandom(server, random) {
  const [type, data] = pick(random, EVENT_KINDS)(server, random);
  server.append(type, data);
}

/**
 * One random action against the server, the transport or the client. A
 * "calm" profile never drops a connection, fails a request, restarts or
 * resyncs: nothing rebuilds the window, so a wrong merge stays visible until
 * the final comparison instead of being healed by a later reload.
 */
function randomStep(server, win, timers, random, profile) {
  const faults = profile.faults ? 1 : 0;
  const actions = [
    [8, () => appendRandom(server, random)],
    [3, () => server.flush(server.durable + Math.ceil(random() * (server.log.length - server.durable)))],
    [3, () => server.pendingConnections().length && server.accept(pick(random, server.pendingConnections()))],
    [14, () => server.busyConnections().length && server.deliver(pick(random, server.busyConnections()))],
    [3, () => server.requests.length && server.serve(pick(random, server.requests))],
    [6, () => server.requests.length && server.respond(pick(random, server.requests))],
    [0.3 * faults, () => server.requests.length && server.fail(pick(random, server.requests), random() < 0.5 ? 0 : 503)],
    [0.3 * faults, () => {
      const live = server.connections.filter((conn) => conn.subscribed && !conn.closing);
      if (live.length) server.drop(pick(random, live), random() < 0.5);
    }],
    [0.15 * faults, () => server.restart()],
    [2, () => timers.fireAll()],
    [3, () => win.loadOlder()],
    [1, () => server.delta("…")],
    [0.1 * faults, () => win.resync()],
  ];
  const total = actions.reduce((sum, [weight]) => sum + weight, 0);
  let roll = random() * total;
  for (const [weight, act] of actions) {
    roll -= weight;
    if (roll < 0) return act();
  }
  return actions.at(-1)[1]();
}

/**
 * Safety at every instant: the arrays are one contiguous run; no view is
 * ever attached to an event that is not durable (a ghost receipt) or to an
 * event other than the durable one at that seq. While the log has not been
 * rewritten by a restart, every event also equals the server's.
 */
function assertSafe(server, win, context, exact) {
  const snap = win.snapshot();
  snap.events.forEach((event, i) => {
    assert.equal(event.seq, snap.lo + i, `${context}: contiguous`);
    if (exact) assert.deepEqual(event, server.log[event.seq], `${context}: event ${event.seq}`);
  });
  for (const [seq, view] of snap.views) {
    assert.ok(seq < server.durable, `${context}: ghost view at ${seq} before durability`);
    assert.deepEqual(snap.events[seq - snap.lo], server.log[seq], `${context}: view on a foreign event`);
    assert.deepEqual(view, viewOf(server.log[seq]), `${context}: wrong view at ${seq}`);
  }
}

/** Run every queue dry: flush, accept, deliver, respond, fire timers. */
async function settle(server, timers) {
  for (let round = 0; round < 10_000; round += 1) {
    let work = 0;
    server.flush();
    for (const conn of server.pendingConnections()) {
      server.accept(conn);
      work += 1;
    }
    for (const conn of server.busyConnections()) {
      while (conn.queue.length > 0 && !conn.done) {
        server.deliver(conn);
        work += 1;
      }
    }
    for (const request of [...server.requests]) {
      server.respond(request);
      work += 1;
    }
    await tick();
    work += timers.fireAll();
    server.prune();
    await tick();
    if (work === 0) return;
  }
  throw new Error("the system did not settle");
}

function expectedViews(server, lo, hi) {
  const views = new Map();
  for (let seq = lo; seq < hi; seq += 1) {
    const view = seq < server.durable ? viewOf(server.log[seq]) : undefined;
    if (view !== undefined) views.set(seq, view);
  }
  return views;
}

function assertMatchesFreshFetch(server, win, context) {
  const snap = win.snapshot();
  assert.equal(snap.status, "live", context);
  assert.equal(snap.buffered, 0, context);
  assert.equal(snap.hi, server.log.length, `${context}: the window reaches the tail`);
  const fresh = server.history({ from: snap.lo, limit: server.log.length + 1 });
  assert.deepEqual(snap.events, fresh.events, `${context}: events equal a fresh fetch`);
  const freshViews = new Map(Object.entries(fresh.views).map(([seq, view]) => [Number(seq), view]));
  assert.deepEqual(snap.views, freshViews, `${context}: views equal a fresh fetch`);
  assert.deepEqual(snap.views, expectedViews(server, snap.lo, snap.hi), context);
}

const RUNS = 400;
const PROFILES = [
  { name: "calm", faults: false, lossy: false },
  { name: "faulty", faults: true, lossy: false },
  { name: "lossy", faults: false, lossy: true },
  { name: "lossy+faulty", faults: true, lossy: true },
];
const STEPS = 160;

test(`snapshot plus events equals a fresh fetch (${RUNS} seeded random interleavings)`, async () => {
  const totals = { resyncs: 0, repairs: 0, reconnects: 0, pages: 0, restarts: 0 };
  for (let seed = 1; seed <= RUNS; seed += 1) {
    const random = seeded(seed);
    const profile = PROFILES[seed % PROFILES.length];
    const server = new FakeServer({ random, lossy: profile.lossy });
    const initial = Math.floor(random() * 25);
    for (let i = 0; i < initial; i += 1) appendRandom(server, random);
    server.flush(Math.floor(random() * (server.log.length + 1)));
    const timers = new FakeTimers();
    const win = new SessionWindow({
      fetchEvents: server.fetchEvents,
      openLive: server.openLive,
      limit: 1 + Math.floor(random() * 6),
      timers,
      backoff: { baseMs: 1, maxMs: 4 },
      onListenerError: (err) => {
        throw err;
      },
    });
    win.start();
    const lifecycle = server.lifecycle;
    for (let step = 0; step < STEPS; step += 1) {
      const result = randomStep(server, win, timers, random, profile);
      if (result instanceof Promise) result.catch(() => {});
      await tick();
      assertSafe(server, win, `seed ${seed} (${profile.name}) step ${step}`, server.lifecycle === lifecycle);
    }
    totals.restarts += server.lifecycle - lifecycle;
    // Quiesce. A lossy run ends with one more event so that a lost last frame
    // shows up as a gap, exactly as the next append would in real life.
    server.lossy = false;
    server.append("turn/end", { status: "ok" });
    await settle(server, timers);
    const context = `seed ${seed} (${profile.name})`;
    assertMatchesFreshFetch(server, win, context);

    // Paging the rest of the way down must still agree with the server.
    while (win.lo > 0) {
      const older = win.loadOlder();
      await settle(server, timers);
      assert.equal(await older, true, `${context}: paging down`);
    }
    assertMatchesFreshFetch(server, win, `${context} after paging to seq 0`);
    assert.equal(win.lo, 0);

    // And it keeps following the live tail afterwards.
    server.append("note/pin", { text: "after" });
    await settle(server, timers);
    assertMatchesFreshFetch(server, win, `${context} after a final append`);
    for (const [key, value] of Object.entries(win.stats())) totals[key] += value;
    win.close();
  }
  // The interleavings really exercised every path.
  for (const [key, value] of Object.entries(totals)) assert.ok(value > 0, `no ${key} happened`);
});
