// Attention across Sessions, assembled: the shell over api.js against a fake
// dsh web host whose host-wide stream (`WS /api/live`) sends every Session's
// alerts and unread counts — the list's [data-role=unread], the tab title,
// notifications for any conversation, read on focus, two tabs agreeing, and
// a host restart with the tab left open.

import assert from "node:assert/strict";
import { test } from "node:test";

import { createApi } from "../../host/dsh/web/static/api.js";
import { NOTIFY_KEY } from "../../host/dsh/web/static/attention.js";
import { mountApp } from "../../host/dsh/web/static/shell.js";
import { FakeDocument } from "./fake-dom.mjs";
import { FakeHttpHost, FakeTimers, pump } from "./fake-server.mjs";

const user = (text) => ["message/user", { text, source: { kind: "user" } }];

function notifications() {
  return class Note {
    static permission = "granted";
    static shown = [];
    constructor(title, options) {
      this.title = title;
      this.options = options;
      this.closed = false;
      Note.shown.push(this);
    }
    close() {
      this.closed = true;
    }
  };
}

function memoryStorage(initial = {}) {
  const data = new Map(Object.entries(initial));
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, String(v)), removeItem: (k) => data.delete(k) };
}

async function mount(host, { initialSession = null, focused = true, token = "t", Notification = notifications(), schedule = (fn) => fn() } = {}) {
  const document = new FakeDocument();
  document.hidden = false;
  document.hasFocus = () => focused;
  const root = document.createElement("div");
  document.body.appendChild(root);
  const timers = new FakeTimers();
  const errors = [];
  const windowFocus = [];
  const api = createApi({ token, fetch: host.fetch });
  const controller = mountApp({
    document,
    root,
    api,
    openLive: host.openLive,
    // The URL carries the token the page holds at each attempt.
    openEverywhere: (since, handlers) => host.openEverywhere(since, handlers, api.token()),
    storage: memoryStorage({ [NOTIFY_KEY]: "on" }),
    importModule: async () => ({}),
    timers,
    schedule,
    initialSession,
    onError: (err) => errors.push(err),
    now: () => Date.UTC(2026, 2, 2, 12),
    Notification,
    focusWindow: () => windowFocus.push(true),
  });
  await controller.start();
  await pump(host, timers);
  const $ = (selector) => root.querySelector(selector);
  const unreadOf = (id) => $(`[data-session-id="${id}"] [data-role=unread]`);
  const look = async (value) => {
    document.hasFocus = () => value;
    if (value) controller.looked();
    await pump(host, timers);
  };
  return { document, root, controller, timers, errors, windowFocus, Notification, $, unreadOf, look };
}

const reads = (host) => host.requests.filter(([method, path]) => method === "POST" && path.endsWith("/read")).map(([, path, body]) => [path, body]);

test("every Session's unread count shows in its entry and the title counts them all", async () => {
  const host = new FakeHttpHost();
  host.addSession("a", { events: [user("tea")] });
  host.addSession("b", { events: [user("plants")] });
  host.addSession("c");
  host.alert("a", 0);
  host.alert("b", 0);
  host.alert("b", 1);
  const app = await mount(host);
  assert.equal(app.unreadOf("a").textContent, "1");
  assert.equal(app.unreadOf("b").textContent, "2");
  assert.equal(app.unreadOf("c").textContent, "");
  assert.ok(app.unreadOf("c").hasAttribute("hidden"), "absent or empty at 0");
  assert.equal(app.document.title, "(3) dsh");
  // Another device marks b read: the frame moves the badge and the title here.
  host.markRead("b", 1);
  await pump(host, app.timers);
  assert.equal(app.unreadOf("b").textContent, "");
  assert.equal(app.document.title, "(1) dsh");
  assert.deepEqual(reads(host), [], "nothing open: nothing read by this page");
});

test("an alert of a conversation that is not open is notified under its title; clicked, it opens there and is read", async () => {
  const host = new FakeHttpHost();
  host.addSession("here", { events: [user("here")] });
  const far = host.addSession("far", { events: [user("water the plants")] });
  const app = await mount(host, { initialSession: "here" });
  far.append("schedule/change", { change: "dispatch" });
  far.flush();
  host.alert("far", 1, { title: "water", body: "Due at 12:00 (UTC)", tag: "far/rem-1@x" });
  await pump(host, app.timers);
  assert.equal(app.Notification.shown.length, 1, "the reader looks at another conversation: still told");
  const [note] = app.Notification.shown;
  assert.equal(note.title, "water the plants · water");
  assert.deepEqual(note.options, { body: "Due at 12:00 (UTC)", tag: "far/rem-1@x" });
  assert.equal(app.unreadOf("far").textContent, "1");
  assert.equal(app.document.title, "(1) here · dsh");
  note.onclick();
  await pump(host, app.timers);
  assert.deepEqual(app.windowFocus, [true]);
  assert.equal(app.controller.currentId(), "far");
  assert.deepEqual(reads(host), [["/api/sessions/far/read", { throughSeq: 1 }]]);
  assert.equal(app.unreadOf("far").textContent, "");
  assert.equal(app.document.title, "water the plants · dsh");
  assert.equal(note.closed, true);
});

test("read on focus: an unfocused tab leaves alerts unread; focusing it marks the open one read, through its last seq", async () => {
  const host = new FakeHttpHost();
  const server = host.addSession("s", { events: [user("hello")] });
  const app = await mount(host, { initialSession: "s", focused: false });
  server.append("schedule/change", { change: "dispatch" });
  host.alert("s", 1, { title: "stretch" });
  await pump(host, app.timers, { take: false });
  assert.equal(app.Notification.shown.length, 1, "away: told");
  assert.equal(app.document.title, "(1) hello · dsh");
  assert.deepEqual(reads(host), [], "not looking: not read");
  await app.look(true);
  assert.deepEqual(reads(host), [["/api/sessions/s/read", { throughSeq: 1 }]]);
  assert.equal(app.document.title, "hello · dsh");
  assert.equal(app.Notification.shown[0].closed, true, "read: its notification goes");
  // Looking again asks nothing more: the mark was taken.
  await app.look(true);
  assert.equal(reads(host).length, 1);
});

test("an alert of the open conversation while the reader looks is read at once and never notified", async () => {
  const host = new FakeHttpHost();
  const server = host.addSession("s", { events: [user("hello")] });
  const app = await mount(host, { initialSession: "s" });
  server.append("schedule/change", { change: "dispatch" });
  host.alert("s", 1, { title: "stretch" });
  await pump(host, app.timers, { take: false });
  assert.equal(app.Notification.shown.length, 0);
  assert.deepEqual(reads(host).at(-1), ["/api/sessions/s/read", { throughSeq: 1 }]);
  assert.equal(host.unread("s"), 0);
  assert.equal(app.document.title, "hello · dsh");
});

test("an alert whose event the window has not yet got is read once the window holds it", async () => {
  const host = new FakeHttpHost();
  const server = host.addSession("s", { events: [user("hello")] });
  const app = await mount(host, { initialSession: "s" });
  // The host-wide stream is quicker than the Session's: seq 1 is not in the window yet.
  host.alert("s", 1, { title: "stretch" });
  host.servePages();
  await pump(host, app.timers, { take: false });
  assert.deepEqual(reads(host), [["/api/sessions/s/read", { throughSeq: 0 }]]);
  assert.equal(host.unread("s"), 1, "only what the window showed is read");
  server.append("schedule/change", { change: "dispatch" });
  await pump(host, app.timers, { take: false });
  assert.deepEqual(reads(host).at(-1), ["/api/sessions/s/read", { throughSeq: 1 }]);
  assert.equal(host.unread("s"), 0);
});

test("two tabs on one host agree: Done in one closes the other's notification and clears its count", async () => {
  const host = new FakeHttpHost();
  host.addSession("s", { events: [user("hello")] });
  host.addSession("other");
  const away = await mount(host, { initialSession: "other", focused: false });
  const phone = await mount(host, { initialSession: "other" });
  host.servers.get("s").append("schedule/change", { change: "dispatch" });
  host.alert("s", 1, { title: "stretch" });
  await pump(host, away.timers);
  await pump(host, phone.timers);
  assert.equal(away.Notification.shown.length, 1);
  assert.equal(phone.Notification.shown.length, 1, "another conversation is open there: told too");
  assert.match(away.document.title, /^\(1\) /);
  assert.match(phone.document.title, /^\(1\) /);
  await phone.controller.markRead("s", 1);
  await pump(host, away.timers);
  await pump(host, phone.timers);
  assert.equal(away.Notification.shown[0].closed, true);
  assert.equal(away.unreadOf("s").textContent, "");
  assert.doesNotMatch(away.document.title, /^\(/);
  assert.doesNotMatch(phone.document.title, /^\(/);
});

test("the tab survives a host restart: the stream comes back by itself and replays what it missed", async () => {
  const host = new FakeHttpHost();
  host.addSession("a", { events: [user("tea")] });
  const app = await mount(host, { focused: false });
  host.alert("a", 0, { title: "first" });
  await pump(host, app.timers);
  assert.equal(app.Notification.shown.length, 1);
  host.closePages(1001);
  host.refusePages(true);
  await pump(host, app.timers, { fire: false });
  assert.equal(app.controller.everywhere.status, "reconnecting");
  // While it is down (a few refused attempts, each asked about over HTTP), a reminder fires.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    assert.equal(app.timers.fireAll(), 1, "one retry armed at a time");
    await pump(host, app.timers, { fire: false });
    assert.equal(app.controller.everywhere.status, "reconnecting");
  }
  host.alert("a", 1, { title: "while down" });
  host.refusePages(false);
  await pump(host, app.timers);
  assert.equal(app.controller.everywhere.status, "ready");
  assert.deepEqual(app.Notification.shown.map((note) => note.options.tag), ["dsh:a:0", "dsh:a:1"], "each once");
  assert.equal(host.pageSince.at(-1), host.alerts[0].at, "since: the last alert it had");
  assert.equal(app.document.title, "(2) dsh");
});

test("a new token refused by the host-wide stream shows the token prompt; a good one starts it again", async () => {
  const host = new FakeHttpHost({ token: "right" });
  host.addSession("a");
  host.alert("a", 0);
  const app = await mount(host, { token: "wrong" });
  assert.equal(app.controller.everywhere.status, "refused", "stopped, not retrying forever");
  assert.equal(app.$("[data-role=token-prompt]").hasAttribute("hidden"), false, "the token prompt asks");
  assert.equal(await app.controller.useToken("right"), true);
  await pump(host, app.timers);
  assert.equal(app.controller.everywhere.status, "ready");
  assert.equal(app.unreadOf("a").textContent, "1");
});

test("a conversation made elsewhere after the list was read is listed once it has unread alerts", async () => {
  const host = new FakeHttpHost();
  host.addSession("here", { events: [user("here")] });
  const app = await mount(host, { initialSession: "here" });
  const lists = () => host.requests.filter(([method, path]) => method === "GET" && path === "/api/sessions").length;
  const before = lists();
  // Another tab (or a phone) makes it and a reminder fires there.
  const far = host.addSession("far", { events: [user("water the plants")] });
  far.append("schedule/change", { change: "dispatch" });
  far.flush();
  host.alert("far", 1, { title: "water" });
  await pump(host, app.timers);
  assert.equal(lists(), before + 1, "the list is read again");
  assert.equal(app.unreadOf("far").textContent, "1", "its entry carries the count");
  assert.match(app.$('[data-session-id="far"]').textContent, /water the plants/);
  assert.equal(app.controller.currentId(), "here");
  // A count of a listed conversation asks nothing more.
  far.append("schedule/change", { change: "dispatch" });
  far.flush();
  host.alert("far", 2, { title: "water again" });
  await pump(host, app.timers);
  assert.equal(app.unreadOf("far").textContent, "2");
  assert.equal(lists(), before + 1);
});

test("a hidden tab, which gets no animation frames, still counts in its title", async () => {
  const host = new FakeHttpHost();
  host.addSession("here", { events: [user("here")] });
  const far = host.addSession("far", { events: [user("water the plants")] });
  let hidden = false;
  const frames = [];
  const app = await mount(host, { initialSession: "here", focused: false, schedule: (fn) => (hidden ? frames.push(fn) : fn()) });
  assert.equal(app.document.title, "here · dsh");
  hidden = true;
  far.append("schedule/change", { change: "dispatch" });
  far.flush();
  host.alert("far", 1, { title: "water" });
  await pump(host, app.timers);
  assert.ok(frames.length > 0, "the page's drawing waits for a frame");
  assert.equal(app.document.title, "(1) here · dsh", "the title does not");
  host.markRead("far", 1);
  await pump(host, app.timers);
  assert.equal(app.document.title, "here · dsh");
});
