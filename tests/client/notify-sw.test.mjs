// Tests for dsh-notify's service worker (plugins/notify/.../static/sw.js),
// run in a sandbox with a fake `self`: what a push shows, and what its
// buttons and a click do. Run with `node --test tests/client/`.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import vm from "node:vm";

const SOURCE = readFileSync(new URL("../../plugins/notify/src/dsh_notify/static/sw.js", import.meta.url), "utf8");
const ORIGIN = "http://127.0.0.1:8765";

function worker({ language = "en-GB", windows = [], answer = { ok: true, status: 200 } } = {}) {
  const listeners = new Map();
  const shown = [];
  const posted = [];
  const opened = [];
  const self = {
    navigator: { language },
    location: { origin: ORIGIN },
    addEventListener: (type, listener) => listeners.set(type, listener),
    skipWaiting: async () => "skipped",
    registration: {
      showNotification: async (title, options) => {
        // Objects made inside the sandbox belong to its realm: compare plain copies.
        shown.push(JSON.parse(JSON.stringify({ title, ...options })));
      },
    },
    clients: {
      claim: async () => "claimed",
      matchAll: async () => windows,
      openWindow: async (url) => opened.push(url),
    },
  };
  const fetch = async (url, init) => {
    posted.push({ url, ...init, body: JSON.parse(init.body) });
    if (answer instanceof Error) throw answer;
    return answer;
  };
  vm.runInNewContext(SOURCE, { self, fetch, URL, JSON, String, encodeURIComponent });
  async function fire(type, event) {
    let done = Promise.resolve();
    listeners.get(type)({ ...event, waitUntil: (promise) => (done = promise) });
    return done;
  }
  return { fire, shown, posted, opened };
}

const ALERT = {
  title: "Call mum",
  body: "Due 14:00",
  sessionId: "s-1",
  tag: "s-1/r1@1",
  url: "/?session=s-1",
  seq: 7,
  act: "claims.mac",
  snooze: true,
};

const pushOf = (payload) => ({ data: { json: () => payload } });

function note(data) {
  const n = { data, closed: false, close: () => (n.closed = true) };
  return n;
}

test("install and activate take over at once", async () => {
  const w = worker();
  assert.equal(await w.fire("install", {}), "skipped");
  assert.equal(await w.fire("activate", {}), "claimed");
});

test("a push shows its title, body and tag, with Snooze 10 min and Done", async () => {
  const w = worker();
  await w.fire("push", pushOf(ALERT));
  assert.equal(w.shown.length, 1);
  const [shown] = w.shown;
  assert.equal(shown.title, "Call mum");
  assert.equal(shown.body, "Due 14:00");
  assert.equal(shown.tag, "s-1/r1@1");
  assert.deepEqual(shown.data, ALERT);
  assert.deepEqual(shown.actions, [
    { action: "snooze", title: "Snooze 10 min" },
    { action: "done", title: "Done" },
  ]);
});

test("the buttons speak Chinese to a Chinese browser and go when they cannot act", async () => {
  const zh = worker({ language: "zh-CN" });
  await zh.fire("push", pushOf(ALERT));
  assert.deepEqual(zh.shown[0].actions.map((a) => a.title), ["推迟 10 分钟", "完成"]);
  const w = worker({ language: undefined });
  await w.fire("push", pushOf({ ...ALERT, snooze: false }));
  await w.fire("push", pushOf({ ...ALERT, act: null, body: undefined, tag: undefined }));
  assert.deepEqual(w.shown[0].actions.map((a) => a.action), ["done"]);
  assert.deepEqual(w.shown[1].actions, []);
  assert.equal(w.shown[1].body, "");
  assert.equal(w.shown[1].tag, "");
});

test("a push that is not an alert still shows a plain reminder", async () => {
  const w = worker();
  await w.fire("push", { data: { json: () => { throw new SyntaxError("bad"); } } });
  await w.fire("push", { data: null });
  await w.fire("push", pushOf({ body: "no title" }));
  await w.fire("push", pushOf(null));
  assert.deepEqual(w.shown.map((s) => s.title), ["A reminder", "A reminder", "A reminder", "A reminder"]);
});

test("Snooze and Done post the capability to /push/act and close the notification", async () => {
  for (const action of ["snooze", "done"]) {
    const w = worker();
    const n = note(ALERT);
    await w.fire("notificationclick", { notification: n, action });
    assert.equal(n.closed, true);
    assert.equal(w.posted.length, 1);
    const [post] = w.posted;
    assert.equal(post.url, "/push/act");
    assert.equal(post.method, "POST");
    assert.equal(post.credentials, "omit");
    assert.deepEqual(post.body, { capability: "claims.mac", action });
    assert.deepEqual(w.shown, []);
    assert.deepEqual(w.opened, []);
  }
});

test("a button that could not act brings the notification back, saying why", async () => {
  const expired = worker({ answer: { ok: false, status: 403 } });
  await expired.fire("notificationclick", { notification: note(ALERT), action: "done" });
  assert.equal(expired.shown[0].body, "This notification has expired: open the conversation instead.");
  assert.equal(expired.shown[0].actions.length, 2);
  const down = worker({ answer: new TypeError("offline") });
  await down.fire("notificationclick", { notification: note(ALERT), action: "snooze" });
  assert.equal(down.shown[0].body, "Couldn't reach dsh: open the conversation instead.");
  const refused = worker({ answer: { ok: false, status: 409 }, language: "zh-TW" });
  await refused.fire("notificationclick", { notification: note(ALERT), action: "snooze" });
  assert.equal(refused.shown[0].body, "操作没有成功：请打开对话。");
});

test("a click opens the conversation: in an open tab of this host, else at /?session=<id>", async () => {
  const messages = [];
  const tab = { url: `${ORIGIN}/#/s/other`, focused: false, focus: async () => (tab.focused = true), postMessage: (m) => messages.push(JSON.parse(JSON.stringify(m))) };
  const stranger = { url: "https://elsewhere.example/", focus: async () => assert.fail("not ours") };
  const refusing = { url: `${ORIGIN}/`, focus: async () => { throw new Error("InvalidAccessError"); }, postMessage: (m) => messages.push(JSON.parse(JSON.stringify(m))) };
  const stubborn = worker({ windows: [refusing] });
  await stubborn.fire("notificationclick", { notification: note(ALERT), action: "" });
  assert.deepEqual(stubborn.opened, []);
  messages.length = 0;
  const w = worker({ windows: [stranger, tab] });
  await w.fire("notificationclick", { notification: note(ALERT), action: "" });
  assert.equal(tab.focused, true);
  assert.deepEqual(messages, [{ kind: "dsh.open-session", sessionId: "s-1" }]);
  assert.deepEqual(w.opened, []);
  const none = worker();
  await none.fire("notificationclick", { notification: note(ALERT), action: "" });
  assert.deepEqual(none.opened, [`${ORIGIN}/?session=s-1`]);
});

test("an unknown button, a missing capability or a foreign url never leave this host", async () => {
  const w = worker();
  await w.fire("notificationclick", { notification: note({ ...ALERT, act: undefined }), action: "done" });
  await w.fire("notificationclick", { notification: note({ ...ALERT, url: "https://evil.example/x" }), action: "other" });
  await w.fire("notificationclick", { notification: note({ ...ALERT, url: "http://[bad" , sessionId: "a b" }), action: "" });
  await w.fire("notificationclick", { notification: note(null), action: "" });
  assert.deepEqual(w.posted, []);
  assert.deepEqual(w.opened, [
    `${ORIGIN}/?session=s-1`,
    `${ORIGIN}/?session=s-1`,
    `${ORIGIN}/?session=a%20b`,
    `${ORIGIN}/?session=`,
  ]);
});
