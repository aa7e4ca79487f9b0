// The host-wide stream (everywhere.js) against a scripted socket opener:
// counts as snapshots and changes, alerts once each and only while unread,
// since across reconnects, backoff, and a refused token that stops it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Everywhere, SETTLE_MS } from "../../host/dsh/web/static/everywhere.js";
import { FakeHttpHost, FakeTimers, pump, tick } from "./fake-server.mjs";

/** A socket opener whose connections the test plays: frames in, a close. */
class Sockets {
  opened = [];

  open = (since, handlers) => {
    const socket = { since, handlers, closed: false };
    this.opened.push(socket);
    return {
      close: () => {
        socket.closed = true;
      },
    };
  };

  get last() {
    return this.opened.at(-1);
  }

  send(frame) {
    this.last.handlers.onFrame(structuredClone(frame));
  }

  end(code) {
    this.last.handlers.onClose({ code, reason: "" });
  }
}

function setup({ probe = null } = {}) {
  const sockets = new Sockets();
  const timers = new FakeTimers();
  const changes = [];
  const news = [];
  const refused = [];
  const lists = [];
  const feed = new Everywhere({
    open: sockets.open,
    timers,
    probe,
    onChange: (ids) => changes.push([...ids].sort()),
    onNews: (alert) => news.push(`${alert.sessionId}:${alert.seq}`),
    onRefused: (err) => refused.push(err.status),
    onList: () => lists.push(sockets.opened.length),
    backoff: { baseMs: 100, maxMs: 1000 },
  });
  return { sockets, timers, changes, news, refused, lists, feed };
}

const alert = (sessionId, seq, at, extra = {}) => ({ kind: "alert", sessionId, seq, title: `t${seq}`, body: "b", tag: `dsh:${sessionId}:${seq}`, at, ...extra });
const unread = (sessionId, count) => ({ kind: "unread", sessionId, count });

/** Fire the timers whose delay is `delay` (the settle delay, or a backoff). */
function fire(timers, delay) {
  for (const [id, timer] of [...timers.pending]) {
    if (timer.delay !== delay) continue;
    timers.pending.delete(id);
    timer.fn();
  }
}

test("hello replaces the counts, unread frames change one; changed Sessions are named once", () => {
  const { sockets, changes, feed } = setup();
  feed.start();
  assert.equal(feed.status, "connecting");
  assert.equal(sockets.last.since, null, "the first connection asks for no replay");
  sockets.send({ kind: "hello", unread: { a: 2, b: 1, zero: 0, bad: -1, odd: "3" } });
  assert.equal(feed.status, "ready");
  assert.equal(feed.heard, true);
  assert.deepEqual([...feed.counts()], [["a", 2], ["b", 1]]);
  assert.equal(feed.total(), 3);
  sockets.send(unread("a", 0));
  sockets.send(unread("c", 4));
  sockets.send(unread("c", 4));
  sockets.send({ kind: "unread", sessionId: "c", count: 1.5 });
  sockets.send({ kind: "something-newer" });
  assert.equal(feed.count("a"), 0);
  assert.equal(feed.total(), 5);
  assert.deepEqual(changes, [["a", "b"], ["a"], ["c"]]);
  // A later hello is a snapshot: what it does not name is 0.
  sockets.send({ kind: "hello", unread: { c: 4 } });
  assert.deepEqual(changes.at(-1), ["b"]);
  assert.deepEqual([...feed.counts()], [["c", 4]]);
});

test("a new alert is news once its count arrives; a replayed or repeated one is not news again", () => {
  const { sockets, timers, news, feed } = setup();
  feed.start();
  sockets.send({ kind: "hello", unread: {} });
  sockets.send(alert("s", 7, 1000));
  assert.deepEqual(news, [], "it waits for the count that includes it");
  sockets.send(unread("s", 1));
  assert.deepEqual(news, ["s:7"]);
  sockets.send(alert("s", 7, 1000));
  sockets.send(unread("s", 1));
  fire(timers, SETTLE_MS);
  assert.deepEqual(news, ["s:7"], "de-duplicated by sessionId and seq");
  assert.equal(feed.since, 1000);
});

test("alerts replayed after a reconnect are news only while unread: the newest `count` of each Session", () => {
  const { sockets, timers, news, feed } = setup();
  feed.start();
  sockets.send({ kind: "hello", unread: {} });
  sockets.send(alert("s", 1, 500));
  sockets.send(unread("s", 1));
  sockets.end(1001);
  fire(timers, 100);
  assert.equal(sockets.last.since, 500, "since: the largest at seen");
  // Meanwhile s:2 and s:3 fired; a phone read s:2 (marks move forward: s:3 is the unread one);
  // t:4 fired and was read there too.
  sockets.send({ kind: "hello", unread: { s: 1 } });
  sockets.send(alert("s", 2, 600));
  sockets.send(alert("s", 3, 700));
  sockets.send(alert("t", 4, 800));
  assert.deepEqual(news, ["s:1"]);
  fire(timers, SETTLE_MS);
  assert.deepEqual(news, ["s:1", "s:3"], "t:4 was read elsewhere: never shown here");
  assert.equal(feed.since, 800);
});

test("a stream that ends is opened again with a growing delay; 1013 at once; a hello resets the delay", () => {
  const { sockets, timers, feed } = setup();
  feed.start();
  sockets.send({ kind: "hello", unread: {} });
  sockets.end(1013);
  assert.equal(feed.status, "reconnecting");
  assert.deepEqual(timers.delays, [0], "fell behind: at once");
  timers.fireAll();
  assert.equal(sockets.opened.length, 2);
  sockets.end(1006);
  timers.fireAll();
  sockets.end(1006);
  timers.fireAll();
  sockets.end(1001);
  assert.deepEqual(timers.delays, [0, 100, 200, 400]);
  timers.fireAll();
  sockets.send({ kind: "hello", unread: {} });
  sockets.end(1001);
  assert.equal(timers.delays.at(-1), 100, "back to the first delay after a hello");
  // The reader comes back: no waiting for the backoff.
  feed.wake();
  assert.equal(sockets.opened.length, 6);
  assert.equal(timers.pending.size, 0);
  feed.wake();
  assert.equal(sockets.opened.length, 6, "only while it is down");
});

test("a handshake refused before any hello is asked about over HTTP: a 401 stops it, anything else retries", async () => {
  let answer = Promise.resolve({ ok: true });
  const { sockets, timers, refused, feed } = setup({ probe: () => answer });
  feed.start();
  sockets.end(1006);
  await tick();
  assert.deepEqual(timers.delays, [100], "the host is fine: it was a blip");
  answer = Promise.reject(Object.assign(new Error("down"), { status: 0 }));
  timers.fireAll();
  sockets.end(1006);
  await tick();
  assert.deepEqual(timers.delays, [100, 200], "the host is away: keep trying");
  answer = Promise.reject(Object.assign(new Error("unauthorized"), { status: 401 }));
  timers.fireAll();
  sockets.end(1006);
  await tick();
  assert.equal(feed.status, "refused");
  assert.deepEqual(refused, [401]);
  assert.equal(timers.pending.size, 0, "stopped: the token prompt takes over");
  // A new token: start again.
  feed.start();
  assert.equal(feed.status, "connecting");
  assert.equal(sockets.opened.length, 4);
});

test("stop closes the stream and nothing it started runs afterwards", () => {
  const { sockets, timers, news, feed } = setup();
  feed.start();
  const first = sockets.last;
  sockets.send({ kind: "hello", unread: {} });
  sockets.send(alert("s", 1, 10));
  feed.stop();
  assert.equal(first.closed, true);
  assert.equal(timers.pending.size, 0);
  first.handlers.onFrame(unread("s", 1));
  first.handlers.onClose({ code: 1006 });
  assert.deepEqual(news, []);
  assert.equal(feed.status, "closed");
  assert.equal(sockets.opened.length, 1);
});

test("an opener that throws is a failed attempt, retried like a closed stream", () => {
  const timers = new FakeTimers();
  let calls = 0;
  const feed = new Everywhere({
    open: () => {
      calls += 1;
      throw new Error("SecurityError");
    },
    timers,
    backoff: { baseMs: 50, maxMs: 50 },
  });
  feed.start();
  assert.equal(feed.status, "reconnecting");
  timers.fireAll();
  assert.equal(calls, 2);
});

test("against the fake host: counts, alerts, a read elsewhere and a host restart", async () => {
  const host = new FakeHttpHost();
  host.addSession("s");
  const timers = new FakeTimers();
  const news = [];
  const feed = new Everywhere({ open: host.openEverywhere, timers, onNews: (item) => news.push(item.title) });
  host.alert("s", 3, { title: "before" });
  feed.start();
  await pump(host, timers);
  assert.equal(feed.count("s"), 1, "the hello counts what was there");
  assert.deepEqual(news, [], "what was unread before the page came is not news");
  host.alert("s", 5, { title: "stretch" });
  await pump(host, timers);
  assert.deepEqual(news, ["stretch"]);
  assert.equal(feed.count("s"), 2);
  host.markRead("s", 5);
  await pump(host, timers);
  assert.equal(feed.count("s"), 0, "another tab read it");
  // The host goes away and comes back: an alert it stored meanwhile is replayed.
  host.closePages(1001);
  host.alert("s", 8, { title: "while away" });
  await pump(host, timers);
  assert.deepEqual(news, ["stretch", "while away"]);
  assert.equal(feed.status, "ready");
  assert.equal(host.pageSince.at(-1), host.alerts[1].at);
  feed.stop();
});

test("a sessions frame says the list changed; so does a hello after a reconnect (a frame may be lost), not the first", () => {
  const { sockets, timers, lists, feed } = setup();
  feed.start();
  sockets.send({ kind: "hello", unread: {} });
  assert.deepEqual(lists, [], "the first hello: the page reads the list anyway");
  sockets.send({ kind: "sessions" });
  sockets.send({ kind: "sessions" });
  assert.deepEqual(lists, [1, 1], "each frame is told (the page coalesces them)");
  sockets.end(1013);
  timers.fireAll();
  assert.equal(sockets.opened.length, 2);
  assert.deepEqual(lists, [1, 1], "nothing before the new hello");
  sockets.send({ kind: "hello", unread: {} });
  assert.deepEqual(lists, [1, 1, 2]);
  sockets.send({ kind: "something-newer" });
  assert.deepEqual(lists, [1, 1, 2]);
});
