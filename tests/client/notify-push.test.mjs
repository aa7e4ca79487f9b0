// Tests for dsh-notify's page module (plugins/notify/.../static/notify-push.js
// and notify-words.js): the worker is registered on load, a subscription is
// made only after "Notify me", and a failing channel shows a quiet line.
// Run with `node --test tests/client/`.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  DECISION_DEADLINE_MS,
  NOTIFY_KEY,
  SUBSCRIPTION_KEY,
  createPush,
  keyBytes,
  register,
} from "../../plugins/notify/src/dsh_notify/static/notify-push.js";
import { clockTime, failingText } from "../../plugins/notify/src/dsh_notify/static/notify-words.js";
import { FakeDocument } from "./fake-dom.mjs";

const KEY = "BAECAwQ"; // base64url of bytes 4, 1, 2, 3, 4

function storage(initial = {}) {
  const data = new Map(Object.entries(initial));
  return {
    data,
    getItem: (k) => data.get(k) ?? null,
    setItem: (k, v) => data.set(k, v),
    removeItem: (k) => data.delete(k),
  };
}

function fakeServer({ health = {}, failHealth = false } = {}) {
  const calls = [];
  async function fetch(path, init) {
    calls.push({ path, method: init.method, body: init.body ? JSON.parse(init.body) : undefined, auth: init.headers.Authorization });
    const reply = (status, body) => ({ ok: status < 300, status, json: async () => body });
    if (path === "/api/push/key") return reply(200, { publicKey: KEY });
    if (path === "/api/push/subscriptions") return reply(201, { id: "sub-1" });
    if (path.startsWith("/api/push/subscriptions/")) return reply(204, null);
    if (path === "/api/health") {
      if (failHealth) throw new TypeError("network down");
      return reply(200, health);
    }
    return reply(404, {});
  }
  return { calls, fetch };
}

function fakeWorker({ existing = null } = {}) {
  const listeners = new Map();
  const pushManager = {
    current: existing,
    made: [],
    async getSubscription() {
      return this.current;
    },
    async subscribe(options) {
      this.made.push(options);
      this.current = subscription([...options.applicationServerKey]);
      return this.current;
    },
  };
  const worker = {
    registered: [],
    pushManager,
    ready: Promise.resolve({ pushManager }),
    async register(url, options) {
      worker.registered.push([url, options]);
      return {};
    },
    addEventListener(type, listener) {
      listeners.set(type, listener);
    },
    emit(type, event) {
      listeners.get(type)?.(event);
    },
  };
  return worker;
}

function subscription(key, endpoint = "https://push.example/1") {
  const sub = {
    endpoint,
    unsubscribed: false,
    options: { applicationServerKey: Uint8Array.from(key).buffer },
    toJSON: () => ({ endpoint, keys: { p256dh: "p", auth: "a" } }),
    async unsubscribe() {
      sub.unsubscribed = true;
      return true;
    },
  };
  return sub;
}

function page() {
  const document = new FakeDocument();
  const attention = document.createElement("span");
  attention.setAttribute("data-role", "attention");
  const notify = document.createElement("button");
  notify.setAttribute("data-role", "notify");
  notify.setAttribute("data-state", "default");
  attention.appendChild(notify);
  document.body.appendChild(attention);
  return { document, attention, notify };
}

async function settle() {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

function setup({ local = storage(), worker = fakeWorker(), server = fakeServer(), sleep } = {}) {
  const { document, attention, notify } = page();
  const opened = [];
  const logged = [];
  let clock = Date.UTC(2026, 11, 5, 14, 2);
  const push = createPush({
    document,
    serviceWorker: worker,
    fetch: server.fetch,
    token: () => "tok",
    local,
    lang: () => "en",
    now: () => clock,
    sleep: sleep ?? (async (ms) => {
      clock += ms;
    }),
    setInterval: () => {},
    openSession: (id) => opened.push(id),
    log: (message) => logged.push(message),
  });
  return { push, document, attention, notify, local, worker, server, opened, logged };
}

test("on load the worker is registered for the whole origin and nothing is subscribed", async () => {
  const t = setup();
  t.push.start();
  await settle();
  assert.deepEqual(t.worker.registered, [["/sw.js", { scope: "/" }]]);
  assert.deepEqual(t.worker.pushManager.made, []);
  assert.deepEqual(
    t.server.calls.map((c) => c.path),
    ["/api/health"],
  );
});

test("a press of Notify me that ends on subscribes with the host's key and posts it", async () => {
  const t = setup({ sleep: () => new Promise((resolve) => setImmediate(resolve)) });
  t.push.start();
  t.notify.setAttribute("data-state", "asking");
  t.notify.click();
  await settle();
  assert.deepEqual(t.worker.pushManager.made, []); // still asking the reader
  t.notify.setAttribute("data-state", "on");
  await settle();
  assert.equal(t.worker.pushManager.made.length, 1);
  assert.equal(t.worker.pushManager.made[0].userVisibleOnly, true);
  assert.deepEqual([...t.worker.pushManager.made[0].applicationServerKey], [4, 1, 2, 3, 4]);
  const posted = t.server.calls.find((c) => c.path === "/api/push/subscriptions");
  assert.deepEqual(posted.body, { endpoint: "https://push.example/1", keys: { p256dh: "p", auth: "a" } });
  assert.equal(posted.auth, "Bearer tok");
  assert.equal(t.local.getItem(SUBSCRIPTION_KEY), "sub-1");
});

test("an existing subscription of the same key is reused; one of another key is replaced", async () => {
  const same = setup({ worker: fakeWorker({ existing: subscription([4, 1, 2, 3, 4]) }) });
  await same.push.decided("on");
  assert.deepEqual(same.worker.pushManager.made, []);
  const old = subscription([9, 9]);
  const other = setup({ worker: fakeWorker({ existing: old }) });
  await other.push.decided("on");
  assert.equal(old.unsubscribed, true);
  assert.equal(other.worker.pushManager.made.length, 1);
  const keyless = subscription([1]);
  keyless.options = {};
  const none = setup({ worker: fakeWorker({ existing: keyless }) });
  await none.push.decided("on");
  assert.equal(keyless.unsubscribed, true);
});

test("a press that ends off forgets the subscription here and at the host", async () => {
  const existing = subscription([4, 1, 2, 3, 4]);
  const t = setup({ local: storage({ [SUBSCRIPTION_KEY]: "sub-1" }), worker: fakeWorker({ existing }) });
  t.push.start();
  t.notify.setAttribute("data-state", "off");
  t.notify.click();
  await settle();
  assert.ok(t.server.calls.some((c) => c.method === "DELETE" && c.path === "/api/push/subscriptions/sub-1"));
  assert.equal(t.local.getItem(SUBSCRIPTION_KEY), null);
  assert.equal(existing.unsubscribed, true);
  const without = setup();
  await without.push.decided("off");
  assert.ok(!without.server.calls.some((c) => c.method === "DELETE"));
});

test("a refused or blocked permission subscribes nothing, and a reader who never answers is given up on", async () => {
  const t = setup();
  await t.push.decided("denied");
  assert.deepEqual(t.worker.pushManager.made, []);
  t.push.start();
  t.notify.setAttribute("data-state", "asking");
  t.notify.click();
  await settle();
  // The fake clock moved past the deadline while the button kept saying "asking".
  assert.deepEqual(t.worker.pushManager.made, []);
  assert.ok(DECISION_DEADLINE_MS > 0);
});

test("a failed subscription is logged, never thrown at the page", async () => {
  const server = fakeServer();
  const fetch = server.fetch;
  server.fetch = async (path, init) => (path === "/api/push/key" ? { ok: false, status: 503 } : fetch(path, init));
  const t = setup({ server });
  await t.push.decided("on");
  assert.deepEqual(t.logged, ["dsh-notify: push subscription failed"]);
});

test("clicks elsewhere are ignored", async () => {
  const t = setup();
  t.push.start();
  t.attention.click();
  await settle();
  assert.deepEqual(t.worker.pushManager.made, []);
});

test("on load an existing subscription is posted again only if the reader had switched it on", async () => {
  const on = setup({ local: storage({ [NOTIFY_KEY]: "on" }), worker: fakeWorker({ existing: subscription([4]) }) });
  on.push.start();
  await settle();
  assert.ok(on.server.calls.some((c) => c.path === "/api/push/subscriptions"));
  const none = setup({ local: storage({ [NOTIFY_KEY]: "on" }) });
  none.push.start();
  await settle();
  assert.ok(!none.server.calls.some((c) => c.path === "/api/push/subscriptions"));
  const off = setup({ worker: fakeWorker({ existing: subscription([4]) }) });
  off.push.start();
  await settle();
  assert.ok(!off.server.calls.some((c) => c.path === "/api/push/subscriptions"));
});

test("a worker that cannot be registered is logged; without one only the status line runs", async () => {
  const worker = fakeWorker();
  worker.register = async () => {
    throw new Error("insecure context");
  };
  const t = setup({ worker });
  t.push.start();
  await settle();
  assert.deepEqual(t.logged, ["dsh-notify: the service worker could not be registered"]);
  const { document } = page();
  const calls = [];
  createPush({ document, serviceWorker: null, fetch: async (path) => calls.push(path) && { ok: true, json: async () => ({}) }, token: () => null, setInterval: () => {} }).start();
  await settle();
  assert.deepEqual(calls, ["/api/health"]);
});

test("the worker's request to open a conversation opens it", async () => {
  const t = setup();
  t.push.start();
  t.worker.emit("message", { data: { kind: "dsh.open-session", sessionId: "s-1" } });
  t.worker.emit("message", { data: { kind: "other", sessionId: "s-2" } });
  t.worker.emit("message", { data: { kind: "dsh.open-session", sessionId: 5 } });
  t.worker.emit("message", { data: null });
  assert.deepEqual(t.opened, ["s-1"]);
});

test("a failing channel shows a quiet line beside the controls, and it goes when it recovers", async () => {
  const since = new Date(2026, 11, 5, 14, 2).getTime();
  const server = fakeServer({ health: { notify: { pending: 1, failed: 0, failing: { webpush: since } } } });
  const t = setup({ server });
  await t.push.checkHealth();
  const line = t.document.querySelector("[data-role=notify-status]");
  assert.equal(line, t.push.status);
  assert.equal(t.attention.nextSibling, line);
  assert.equal(line.hasAttribute("hidden"), false);
  assert.equal(line.textContent, "Couldn't reach your phone since 14:02");
  server.calls.length = 0;
  const healthy = fakeServer({ health: { notify: { pending: 0, failed: 0, failing: {} } } });
  const again = setup({ server: healthy });
  await again.push.checkHealth();
  assert.equal(again.push.status.hasAttribute("hidden"), true);
  assert.equal(again.push.status.textContent, "");
});

test("a hidden tab asks nothing, and a host that cannot be reached hides the line", async () => {
  const t = setup({ server: fakeServer({ failHealth: true }) });
  t.document.hidden = true;
  await t.push.checkHealth();
  assert.deepEqual(t.server.calls, []);
  t.document.hidden = false;
  await t.push.checkHealth();
  assert.equal(t.push.status.hasAttribute("hidden"), true);
  const refused = setup({ server: { fetch: async () => ({ ok: false, status: 401 }) } });
  await refused.push.checkHealth();
  assert.equal(refused.push.status.hasAttribute("hidden"), true);
  const older = setup({ server: fakeServer({ health: {} }) });
  await older.push.checkHealth(); // a host without dsh-notify's health
  assert.equal(older.push.status.hasAttribute("hidden"), true);
});

test("the failing line speaks of the phone for Web Push and of notifications otherwise, in both languages", () => {
  const now = new Date(2026, 11, 5, 18, 0).getTime();
  const at = new Date(2026, 11, 5, 14, 2).getTime();
  const before = new Date(2026, 11, 5, 9, 30).getTime();
  assert.equal(failingText({ webpush: at, apprise: before }, "en", now), "Couldn't reach your phone since 14:02");
  assert.equal(failingText({ apprise: at, other: before }, "en", now), "Couldn't send notifications since 09:30");
  assert.equal(failingText({ webpush: at }, "zh", now), "自 14:02 起无法送达你的手机");
  assert.equal(failingText({ apprise: at }, "zh", now), "自 14:02 起无法发送通知");
  assert.equal(failingText({ webpush: at }, "fr", now), "Couldn't reach your phone since 14:02");
  assert.equal(failingText({}, "en", now), null);
  assert.equal(failingText({ webpush: "soon" }, "en", now), null);
  assert.equal(failingText(null, "en", now), null);
  assert.equal(failingText("x", "en", now), null);
});

test("a time of another day carries its date", () => {
  const now = new Date(2026, 11, 5, 8, 0).getTime();
  assert.equal(clockTime(new Date(2026, 11, 4, 23, 5).getTime(), now), "12-04 23:05");
  assert.equal(clockTime(new Date(2026, 11, 5, 7, 59).getTime(), now), "07:59");
});

test("keyBytes decodes base64url; register does nothing outside a browser", () => {
  assert.deepEqual([...keyBytes("BAECAwQ")], [4, 1, 2, 3, 4]);
  assert.deepEqual([...keyBytes("-_8")], [251, 255]);
  assert.equal(register({ lang: () => "en" }), undefined);
});
