// The assembled client: the shell over the real api.js, talking to a fake
// dsh web host (FakeHttpHost) whose Sessions are FakeServers.

import assert from "node:assert/strict";
import { test } from "node:test";

import { createApi } from "../../host/dsh/web/static/api.js";
import { LANG_KEY } from "../../host/dsh/web/static/i18n.js";
import { mountApp } from "../../host/dsh/web/static/shell.js";
import { SEARCH_DELAY_MS } from "../../host/dsh/web/static/sidebar.js";
import { createTheme } from "../../host/dsh/web/static/theme.js";
import { FakeDocument } from "./fake-dom.mjs";
import { FakeHttpHost, FakeTimers, pump, tick } from "./fake-server.mjs";

const PLUGIN = { plugin: "ui-demo", url: "/plugins/ui-demo/demo.js", eventTypes: ["note/pin"] };
const user = (text) => ["message/user", { text, source: { kind: "user" } }];
const assistant = (text, toolCalls = []) => ["message/assistant", { text, toolCalls }];

function fakeHost(options = {}) {
  return new FakeHttpHost({ modules: [PLUGIN], ...options });
}

function demoPlugin() {
  return {
    register(registry) {
      registry.register("note/pin", (view, event, ctx) => {
        const el = ctx.document.createElement("span");
        el.setAttribute("data-role", "pin");
        el.textContent = `${registry.lang()}:${view.pinned}`;
        return el;
      });
    },
  };
}

function memoryStorage() {
  const data = new Map();
  return {
    data,
    getItem: (key) => data.get(key) ?? null,
    setItem: (key, value) => data.set(key, value),
    removeItem: (key) => data.delete(key),
  };
}

async function mount({ host = fakeHost(), storage = memoryStorage(), api, initialSession = null, theme, pumpOptions, ...rest } = {}) {
  const document = new FakeDocument();
  const root = document.createElement("div");
  document.body.appendChild(root);
  const timers = new FakeTimers();
  const navigations = [];
  const errors = [];
  const copied = [];
  const controller = mountApp({
    document,
    root,
    api: api === undefined ? createApi({ token: "t", fetch: host.fetch }) : api,
    openLive: host.openLive,
    storage,
    navigatorLanguages: ["en-GB"],
    importModule: async (url) => {
      if (url === PLUGIN.url) return demoPlugin();
      throw new Error(`no module ${url}`);
    },
    timers,
    schedule: (fn) => fn(),
    initialSession,
    onNavigate: (id) => navigations.push(id),
    onError: (err) => errors.push(err),
    timeZone: "Europe/Berlin",
    now: () => Date.UTC(2026, 11, 1, 12),
    copyText: async (text) => {
      copied.push(text);
      return true;
    },
    theme,
    ...rest,
  });
  await controller.start();
  await pump(host, timers, pumpOptions);
  const $ = (selector) => root.querySelector(selector);
  const $$ = (selector) => root.querySelectorAll(selector);
  const sent = () => host.requests.filter(([method, path]) => method === "POST" && path.endsWith("/messages"));
  return { document, root, controller, host, timers, navigations, errors, storage, copied, $, $$, sent };
}

function key(target, init) {
  return target.dispatchEvent({ type: "keydown", key: "Enter", shiftKey: false, isComposing: false, ...init });
}

test("the page exposes the stable hooks", async () => {
  const app = await mount();
  for (const role of ["new-session", "session-list", "composer", "send", "transcript", "session-search", "theme-toggle", "stop", "new-messages"]) {
    assert.ok(app.$(`[data-role=${role}]`), role);
  }
  assert.equal(app.$("[data-role=composer]").localName, "textarea");
  assert.equal(app.$("[data-role=session-list]").localName, "ul");
  assert.equal(app.$("[data-role=send]").localName, "button");
  assert.equal(app.$("[data-role=session-search]").localName, "input");
  assert.ok(app.$("[data-role=stop]").hasAttribute("hidden"), "Stop shows only while a turn runs");
  assert.ok(app.$("[data-role=new-messages]").hasAttribute("hidden"));
  assert.equal(app.$("[data-role=transcript]").getAttribute("aria-live"), null, "the transcript itself is not live");
  assert.equal(app.$("[data-role=announcer]").getAttribute("aria-live"), "polite");
});

test("sessions are listed newest first by title; opening one shows its transcript and names it", async () => {
  const host = fakeHost();
  host.addSession("first", { live: false, events: [user("old hello")] });
  host.addSession("0123456789abcdef", { events: [user("hi"), assistant("hello!"), ["note/pin", { text: "pinned" }]], title: "Greetings" });
  host.addSession("empty");
  const app = await mount({ host });
  const items = app.$$("[data-role=session-list] [data-session-id]");
  assert.deepEqual(items.map((b) => b.getAttribute("data-session-id")), ["empty", "0123456789abcdef", "first"]);
  assert.deepEqual(items.map((b) => b.querySelector("[data-role=session-title]").textContent), ["empty", "Greetings", "old hello"]);
  assert.deepEqual(items.map((b) => b.querySelector("[data-badge]").textContent), ["open", "open", "closed"]);
  items[1].click();
  await pump(host, app.timers);
  assert.deepEqual(app.navigations, ["0123456789abcdef"]);
  const nodes = app.$$("[data-role=transcript] [data-seq][data-event-type]");
  assert.deepEqual(nodes.map((n) => n.getAttribute("data-event-type")), ["message/user", "message/assistant", "note/pin"]);
  assert.equal(app.$("[data-view=note/pin] [data-role=pin]").textContent, "en:pinned", "the plugin renders its view");
  assert.equal(app.$('[data-session-id="0123456789abcdef"]').getAttribute("aria-current"), "true");
  assert.equal(app.$("[data-role=title]").textContent, "Greetings");
  assert.equal(app.$("[data-role=title]").getAttribute("title"), "0123456789abcdef");
  assert.equal(app.document.title, "Greetings · dsh");
});

test("new session creates, opens and lists it, and puts the cursor in the composer", async () => {
  const app = await mount();
  app.$("[data-role=new-session]").click();
  await pump(app.host, app.timers);
  assert.deepEqual(app.host.requests.filter(([m]) => m === "POST").map(([, path]) => path), ["/api/sessions"]);
  assert.equal(app.controller.currentId(), "n1");
  assert.deepEqual(app.navigations, ["n1"]);
  assert.ok(app.$("[data-session-id=n1]"));
  assert.equal(app.$("[data-role=title]").textContent, "n1", "a short id until it has a title");
  assert.match(app.$("[data-role=transcript]").textContent, /Say something to begin/);
  assert.equal(app.document.activeElement, app.$("[data-role=composer]"));
});

test("Enter sends with the reader's zone; the message is pending until its message/user is stored", async () => {
  const app = await mount();
  await app.controller.newSession();
  await pump(app.host, app.timers);
  const composer = app.$("[data-role=composer]");
  composer.value = "line one";
  assert.equal(key(composer, { shiftKey: true }), true, "Shift+Enter keeps its newline");
  assert.equal(key(composer, { isComposing: true }), true, "confirming a 中文 composition does not send");
  assert.equal(app.sent().length, 0);
  assert.equal(key(composer), false, "Enter is taken over");
  await tick();
  await tick();
  assert.deepEqual(app.sent(), [["POST", "/api/sessions/n1/messages", { text: "line one", timeZone: "Europe/Berlin" }]]);
  assert.equal(composer.value, "");
  const pending = app.$("[data-role=pending]");
  assert.match(pending.textContent, /line one/);
  assert.match(pending.textContent, /queued, waiting to be stored/, "a 202 means queued, not stored");
  await pump(app.host, app.timers, { take: false });
  assert.ok(app.$("[data-role=pending]"), "still pending while the agent has not taken it");
  // The agent stores the message: the pending node gives way to the event.
  await pump(app.host, app.timers);
  assert.equal(app.$("[data-role=pending]"), null);
  assert.match(app.$("[data-event-type=message/user]").textContent, /line one/);
  assert.match(app.$("[data-session-id=n1] [data-role=session-active]").textContent, /^active /, "the row says when it was last active");
});

test("a new Session takes its title in the list once its first message is stored", async () => {
  const app = await mount();
  await app.controller.newSession();
  await pump(app.host, app.timers);
  assert.doesNotMatch(app.$("[data-session-id=n1]").textContent, /plan the trip/);
  await app.controller.send("plan the trip\nwith details");
  await pump(app.host, app.timers);
  assert.match(app.$("[data-session-id=n1]").textContent, /plan the trip/, "the list asked again once it was stored");
  const lists = () => app.host.requests.filter(([m, path]) => m === "GET" && path.startsWith("/api/sessions?") || path === "/api/sessions").length;
  const before = lists();
  app.host.servers.get("n1").append(...assistant("sure"));
  app.host.servers.get("n1").flush();
  await pump(app.host, app.timers);
  assert.equal(lists(), before, "a titled Session does not ask for the list on every event");
});

test("a refused message keeps its text with Retry, Edit and Dismiss; Retry sends it again", async () => {
  const app = await mount();
  await app.controller.newSession();
  await pump(app.host, app.timers);
  app.host.failNext("POST", "/messages$", { status: 422, body: { error: { code: "invalid_body", message: "text: too long" } } });
  app.$("[data-role=composer]").value = "refuse me";
  app.$("[data-role=send]").click();
  await pump(app.host, app.timers);
  const failed = app.$("[data-role=pending]");
  assert.equal(failed.getAttribute("data-state"), "failed");
  assert.match(failed.textContent, /refuse me/);
  assert.match(failed.textContent, /Not sent: text: too long/);
  failed.querySelector("[data-action=retry]").click();
  await pump(app.host, app.timers);
  assert.equal(app.sent().length, 2);
  assert.equal(app.$("[data-role=pending]"), null, "the retry was stored");
  assert.match(app.$("[data-event-type=message/user]").textContent, /refuse me/);
  // Edit puts a failed text back in the composer; Dismiss drops it.
  app.host.failNext("POST", "/messages$", { status: 500, body: { error: { code: "internal_error", message: "boom" } } });
  await app.controller.send("second try");
  app.$("[data-role=composer]").value = "";
  app.$("[data-role=pending] [data-action=edit]").click();
  assert.equal(app.$("[data-role=composer]").value, "second try");
  assert.equal(app.document.activeElement, app.$("[data-role=composer]"));
  assert.equal(app.$("[data-role=pending]"), null);
  app.host.failNext("POST", "/messages$", { status: 500, body: { error: { code: "internal_error", message: "boom" } } });
  await app.controller.send("third");
  app.$("[data-role=pending] [data-action=dismiss]").click();
  assert.equal(app.$("[data-role=pending]"), null);
  app.$("[data-role=composer]").value = "   ";
  app.$("[data-role=send]").click();
  await pump(app.host, app.timers);
  assert.equal(app.sent().length, 4, "blank text is not sent");
});

test("a turn the model could not answer says so plainly; Retry sends the person's message again", async () => {
  const host = fakeHost();
  const server = host.addSession("a", { events: [user("what is on today?")] });
  const app = await mount({ host, initialSession: "a" });
  const raw = "ConnectError: [Errno -2] Name or service not known (gave up after 4 attempts)";
  server.append("turn/end", { status: "error", error: { code: "model_unavailable", message: raw } });
  await pump(app.host, app.timers);
  const failure = app.$("[data-event-type=turn/end]");
  assert.equal(failure.querySelector(".error-text").textContent, "The model could not be reached. Check your connection or the model settings.");
  assert.equal(failure.querySelector("[data-role=error-code]").textContent, `model_unavailable: ${raw}`);
  app.$("[data-role=composer]").value = "a draft stays";
  failure.querySelector("[data-action=retry]").click();
  await pump(app.host, app.timers);
  assert.deepEqual(app.sent().map(([, path, body]) => [path, body.text]), [["/api/sessions/a/messages", "what is on today?"]]);
  assert.equal(app.$("[data-role=composer]").value, "a draft stays", "a draft in the composer is not touched");
  assert.equal(app.$("[data-event-type=turn/end] [data-action=retry]"), null, "once sent again, the old failure offers no Retry");
});

test("a send the network ate says the host did not answer; Retry works once it is back", async () => {
  const app = await mount();
  await app.controller.newSession();
  await pump(app.host, app.timers);
  app.host.failNext("POST", "/messages$", "network");
  await app.controller.send("are you there?");
  const failed = app.$("[data-role=pending]");
  assert.match(failed.textContent, /Not sent: dsh web did not answer/);
  failed.querySelector("[data-action=retry]").click();
  await pump(app.host, app.timers);
  assert.equal(app.$("[data-role=pending]"), null);
  assert.equal(app.$$("[data-event-type=message/user]").length, 1);
});

test("a queued message the host lost in a restart shows as not stored, text kept", async () => {
  const host = fakeHost();
  const server = host.addSession("a", { events: [user("before"), ["turn/end", { status: "ok" }]] });
  const app = await mount({ host, initialSession: "a" });
  await app.controller.send("will be lost");
  await pump(host, app.timers, { take: false });
  assert.equal(app.$("[data-role=pending]").getAttribute("data-state"), "queued");
  // The host dies before its agent took the message, and comes back cold.
  host.inboxes.get("a").length = 0;
  host.summaries.get("a").live = false;
  server.restart();
  await pump(host, app.timers, { take: false });
  const lost = app.$("[data-role=pending]");
  assert.equal(lost.getAttribute("data-state"), "failed");
  assert.match(lost.textContent, /will be lost/);
  assert.match(lost.textContent, /Not stored: the conversation stopped before it was stored/);
  lost.querySelector("[data-action=retry]").click();
  await pump(host, app.timers);
  assert.equal(app.$("[data-role=pending]"), null);
  assert.match(app.$("[data-role=transcript]").textContent, /will be lost/);
});

test("a queued message is not stored when the host comes back with the Session cold", async () => {
  const host = fakeHost();
  const server = host.addSession("a");
  const app = await mount({ host, initialSession: "a" });
  await app.controller.send("gone with the process");
  await pump(host, app.timers, { take: false });
  // A restart that left the Session cold: no new lifecycle in its log, no agent to take the message.
  host.inboxes.get("a").length = 0;
  host.summaries.get("a").live = false;
  server.drop(server.connections[0], false);
  await pump(host, app.timers, { take: false });
  assert.equal(app.$("[data-role=pending]").getAttribute("data-state"), "failed");
  assert.match(app.$("[data-role=pending]").textContent, /Not stored: the conversation stopped/);
  assert.ok(host.requests.some(([m, path]) => m === "GET" && path === "/api/sessions/a"));
});

test("a list read after a reconnect that finds the host away again reports nothing", async () => {
  const host = fakeHost();
  const server = host.addSession("a");
  const app = await mount({ host, initialSession: "a" });
  const reported = app.errors.length;
  // The stream comes back, and the host goes away again before the list is read.
  host.failNext("GET", "^/api/sessions$", "network");
  server.drop(server.connections[0], false);
  await pump(host, app.timers, { take: false });
  assert.ok(host.requests.filter(([m, path]) => m === "GET" && path === "/api/sessions").length >= 2);
  assert.equal(app.errors.length, reported, "the connection state already says it");
  assert.equal(app.$("[data-role=banner]")?.hidden ?? true, true);
});

test("a queued message stays pending across a reconnect while the Session is still live", async () => {
  const host = fakeHost();
  const server = host.addSession("a");
  const app = await mount({ host, initialSession: "a" });
  await app.controller.send("hold on");
  await pump(host, app.timers, { take: false });
  server.drop(server.connections[0], false);
  await pump(host, app.timers, { take: false });
  assert.equal(app.controller.currentWindow().status, "live");
  assert.equal(app.$("[data-role=pending]").getAttribute("data-state"), "queued");
});

test("sending without a session starts one first", async () => {
  const app = await mount();
  await app.controller.send("hello there");
  await pump(app.host, app.timers);
  assert.deepEqual(
    app.host.requests.filter(([m]) => m === "POST").map(([, path, body]) => [path, body]),
    [["/api/sessions", {}], ["/api/sessions/n1/messages", { text: "hello there", timeZone: "Europe/Berlin" }]],
  );
});

// The reader is quicker than the host: Send lands while the Session New made
// is still being opened (its detail request in flight), or still being
// created. The message must wait for that Session and go to it — not vanish,
// and not start a second Session.
test("Send while the new Session is still being opened waits for it and sends there", async () => {
  const app = await mount();
  const detail = app.host.hold("GET", "^/api/sessions/n1$");
  app.$("[data-role=new-session]").click();
  await pump(app.host, app.timers);
  assert.ok(detail.arrived, "the Session is created and being opened");
  assert.equal(app.controller.currentId(), null);
  const composer = app.$("[data-role=composer]");
  composer.value = "hello, quick";
  app.$("[data-role=send]").click();
  await pump(app.host, app.timers);
  assert.equal(app.sent().length, 0, "nothing is sent before the Session is open");
  assert.equal(composer.value, "hello, quick", "the text waits in the composer");
  detail.release();
  await pump(app.host, app.timers);
  assert.deepEqual(
    app.host.requests.filter(([m]) => m === "POST").map(([, path, body]) => [path, body]),
    [["/api/sessions", {}], ["/api/sessions/n1/messages", { text: "hello, quick", timeZone: "Europe/Berlin" }]],
  );
  assert.equal(composer.value, "");
  assert.equal(app.controller.currentId(), "n1");
  assert.match(app.$("[data-event-type=message/user]").textContent, /hello, quick/);
  assert.equal(app.$("[data-role=pending]"), null);
});

test("Send while New is still creating the Session waits for that one, not a second", async () => {
  const app = await mount();
  const creation = app.host.hold("POST", "^/api/sessions$");
  app.$("[data-role=new-session]").click();
  await pump(app.host, app.timers);
  assert.ok(creation.arrived);
  app.$("[data-role=composer]").value = "first words";
  app.$("[data-role=send]").click();
  await pump(app.host, app.timers);
  assert.equal(app.host.requests.filter(([m]) => m === "POST").length, 1, "one creation in flight, no second");
  creation.release();
  await pump(app.host, app.timers);
  assert.deepEqual(
    app.host.requests.filter(([m]) => m === "POST").map(([, path]) => path),
    ["/api/sessions", "/api/sessions/n1/messages"],
  );
  assert.deepEqual([...app.host.servers.keys()], ["n1"]);
  assert.equal(app.controller.currentId(), "n1");
  assert.match(app.$("[data-event-type=message/user]").textContent, /first words/);
});

test("Send while a listed Session opens goes to it; if the reader moves on first, the text stays", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [user("earlier")] });
  host.addSession("b");
  const app = await mount({ host });
  const composer = app.$("[data-role=composer]");
  let detail = host.hold("GET", "^/api/sessions/a$");
  app.$("[data-session-id=a]").click();
  await pump(host, app.timers);
  assert.ok(detail.arrived);
  composer.value = "to a";
  app.$("[data-role=send]").click();
  await pump(host, app.timers);
  detail.release();
  await pump(host, app.timers);
  assert.deepEqual(app.sent().map(([, path]) => path), ["/api/sessions/a/messages"]);
  assert.equal(composer.value, "");
  // Now the reader sends while "b" opens, then picks "a" again before "b" is shown.
  detail = host.hold("GET", "^/api/sessions/b$");
  app.$("[data-session-id=b]").click();
  await pump(host, app.timers);
  composer.value = "meant for b";
  app.$("[data-role=send]").click();
  await pump(host, app.timers);
  app.$("[data-session-id=a]").click();
  detail.release();
  await pump(host, app.timers);
  assert.equal(app.controller.currentId(), "a");
  assert.deepEqual(app.sent().map(([, path]) => path), ["/api/sessions/a/messages"], "not sent to a Session the reader left");
  assert.equal(composer.value, "meant for b", "the text is kept for the reader");
});

test("a Session opened before the UI plugins have loaded shows their views once they have", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [user("pin it"), ["note/pin", { text: "pinned" }]] });
  const document = new FakeDocument();
  const root = document.createElement("div");
  document.body.appendChild(root);
  const timers = new FakeTimers();
  let loaded;
  const plugin = new Promise((resolve) => {
    loaded = resolve;
  });
  const controller = mountApp({
    document,
    root,
    api: createApi({ token: "t", fetch: host.fetch }),
    openLive: host.openLive,
    importModule: () => plugin,
    timers,
    schedule: (fn) => fn(),
  });
  const started = controller.start();
  // The reader opens a Session (a link, the hash) while the plugin module is still loading.
  controller.openSession("a");
  await pump(host, timers);
  assert.ok(root.querySelector("[data-view=note/pin] [data-role=json-fallback]"), "no renderer yet");
  assert.equal(root.querySelector("[data-panel=pins]"), null);
  const late = demoPlugin();
  const register = late.register;
  late.register = (registry) => {
    register(registry);
    registry.registerPanel("pins", {
      mount: ({ document: doc }) => {
        const element = doc.createElement("section");
        return { element, update: (props) => element.setAttribute("data-for", props.sessionId) };
      },
    });
  };
  loaded(late);
  await started;
  await pump(host, timers, { fire: false }); // a panel ticks for its countdowns
  assert.equal(root.querySelector("[data-view=note/pin] [data-role=pin]").textContent, "en:pinned");
  assert.equal(root.querySelector("[data-role=json-fallback]"), null);
  // Its panel joins the Session already open, fed like the others.
  assert.equal(root.querySelector("[data-panel=pins]").getAttribute("data-for"), "a");
  controller.destroy();
});

test("while a turn runs: a typing indicator, streamed text, and Stop, which cancels it", async () => {
  const host = fakeHost();
  const server = host.addSession("a");
  const app = await mount({ host, initialSession: "a" });
  await app.controller.send("think hard");
  await pump(host, app.timers);
  const stop = app.$("[data-role=stop]");
  assert.ok(app.$("[data-role=typing] .typing-dots"), "a turn runs: the assistant is typing");
  assert.equal(stop.hasAttribute("hidden"), false);
  server.delta("Thin");
  server.delta("king");
  await pump(host, app.timers);
  assert.match(app.$("[data-role=typing]").textContent, /Thinking/);
  stop.click();
  assert.ok(stop.hasAttribute("disabled"), "one stop at a time");
  await pump(host, app.timers);
  assert.deepEqual(host.requests.filter(([, path]) => path.endsWith("/cancel")).map(([m, path]) => [m, path]), [["POST", "/api/sessions/a/cancel"]]);
  assert.match(app.$("[data-event-type=turn/end]").textContent, /cancelled/);
  assert.equal(app.$("[data-role=typing]"), null);
  assert.ok(stop.hasAttribute("hidden"));
  assert.equal(stop.hasAttribute("disabled"), false);
  assert.equal(await app.controller.stop(), false, "nothing left to stop");
});

test("a host without the second edition: rename, delete and stop say plainly they are not there", async () => {
  const host = fakeHost({ secondEdition: false });
  host.addSession("a", { events: [user("running")] });
  const app = await mount({ host, initialSession: "a" });
  const banner = app.$("[data-role=banner]");
  assert.equal(app.$("[data-role=stop]").hasAttribute("hidden"), false);
  app.$("[data-role=stop]").click();
  await pump(host, app.timers);
  assert.equal(banner.hasAttribute("hidden"), false);
  assert.match(banner.textContent, /cannot stop a running turn yet \(it answered 404\)/);
  assert.equal(await app.controller.renameSession("a", "New name"), false);
  assert.match(banner.textContent, /cannot rename conversations yet \(it answered 405\)/);
  const deleting = app.controller.deleteSession("a");
  await tick();
  app.$("[data-role=confirm-delete] [data-value=delete]").click();
  assert.equal(await deleting, false);
  assert.match(banner.textContent, /cannot delete conversations yet \(it answered 405\)/);
  assert.ok(app.$("[data-session-id=a]"), "the Session is still listed");
  app.$("[data-lang=zh]").click();
  assert.match(banner.textContent, /还不能删除对话/);
});

test("rename inline saves the title through PATCH; the list and the header show it", async () => {
  const host = fakeHost();
  host.addSession("0123456789abcdef", { events: [user("plan the trip")] });
  const app = await mount({ host, initialSession: "0123456789abcdef" });
  assert.equal(app.$("[data-role=title]").textContent, "plan the trip", "the host's title from the first message");
  app.$("[data-session-id] [data-action=rename]").click();
  const input = app.$("[data-role=rename-input]");
  input.value = "Trip to Kyoto";
  input.dispatchEvent({ type: "keydown", key: "Enter" });
  await pump(host, app.timers);
  assert.deepEqual(host.requests.filter(([m]) => m === "PATCH"), [["PATCH", "/api/sessions/0123456789abcdef", { title: "Trip to Kyoto" }]]);
  assert.equal(app.$("[data-role=session-title]").textContent, "Trip to Kyoto");
  assert.equal(app.$("[data-role=title]").textContent, "Trip to Kyoto");
  // Renamed elsewhere: the session/title event reaches the open Session's header live.
  host.servers.get("0123456789abcdef").append("session/title", { title: "Kyoto, in May" });
  await pump(host, app.timers);
  assert.equal(app.$("[data-role=title]").textContent, "Kyoto, in May");
  host.failNext("PATCH", ".", { status: 422, body: { error: { code: "invalid_body", message: "title: too long" } } });
  assert.equal(await app.controller.renameSession("0123456789abcdef", "x"), false);
  assert.match(app.$("[data-role=banner]").textContent, /title: too long/);
});

test("delete says how many pending reminders stop: the open one's state, a listed one's summary, else nothing", async () => {
  const host = fakeHost();
  host.addSession("quiet", { events: [user("quiet")] });
  host.addSession("listed", { events: [user("listed")] });
  host.summaries.get("listed").plugins = { "tool-schedule": { reminders: 1 } };
  host.addSession("open", { events: [user("open")] });
  host.plugins.set("open", { "tool-schedule": { reminders: [{ id: "r1" }, { id: "r2" }] } });
  const app = await mount({ host, initialSession: "open" });
  await pump(host, app.timers);
  const stops = async (id) => {
    app.$(`[data-session-id=${id}] [data-action=delete]`).click();
    await tick();
    const said = app.$("[data-role=confirm-delete] [data-role=delete-stops]")?.textContent ?? null;
    app.$("[data-role=confirm-delete] [data-value=cancel]").click();
    await pump(host, app.timers);
    return said;
  };
  assert.equal(await stops("open"), "Its 2 pending reminders stop.");
  assert.equal(await stops("listed"), "Its pending reminder stops.");
  assert.equal(await stops("quiet"), null);
});

test("delete asks first; confirmed, the Session leaves the list and the view", async () => {
  const host = fakeHost();
  host.addSession("keep", { events: [user("keep me")] });
  host.addSession("drop", { events: [user("drop me")] });
  const app = await mount({ host, initialSession: "drop" });
  const button = app.$("[data-session-id=drop] [data-action=delete]");
  button.focus();
  button.click();
  await tick();
  let dialog = app.$("[data-role=confirm-delete]");
  assert.ok(dialog.hasAttribute("open"));
  assert.match(dialog.textContent, /Delete this conversation\?/);
  assert.match(dialog.textContent, /“drop me” will leave the list/);
  assert.equal(dialog.querySelector(".hint code").textContent, "dsh sessions restore drop");
  assert.equal(app.document.activeElement, dialog.querySelector("[data-value=delete]"));
  dialog.querySelector("[data-value=cancel]").click();
  await pump(host, app.timers);
  assert.equal(app.$("[data-role=confirm-delete]"), null);
  assert.equal(app.document.activeElement, button, "focus returns where it was");
  assert.equal(host.requests.filter(([m]) => m === "DELETE").length, 0);
  // Esc dismisses too.
  app.$("[data-session-id=drop] [data-action=delete]").click();
  await tick();
  app.$("[data-role=confirm-delete]").dispatchEvent({ type: "keydown", key: "Escape" });
  await pump(host, app.timers);
  assert.equal(host.requests.filter(([m]) => m === "DELETE").length, 0);
  app.$("[data-session-id=drop] [data-action=delete]").click();
  await tick();
  dialog = app.$("[data-role=confirm-delete]");
  dialog.querySelector("[data-value=delete]").click();
  await pump(host, app.timers);
  assert.deepEqual(host.requests.filter(([m]) => m === "DELETE"), [["DELETE", "/api/sessions/drop", undefined]]);
  assert.equal(app.$("[data-session-id=drop]"), null);
  assert.equal(app.controller.currentId(), null);
  assert.deepEqual(app.navigations, ["drop", null]);
  assert.match(app.$("[data-role=transcript]").textContent, /Pick a conversation/);
});

test("search asks the host once typing pauses, and shows what matches", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [user("buy tea")] });
  host.addSession("b", { events: [user("fix the bike")], title: "Bike" });
  const app = await mount({ host, pumpOptions: { fire: false } });
  const search = app.$("[data-role=session-search]");
  const lists = () => host.requests.filter(([m, path]) => m === "GET" && path.startsWith("/api/sessions") && !path.includes("/api/sessions/"));
  const before = lists().length;
  search.value = "t";
  search.dispatchEvent({ type: "input" });
  search.value = "te";
  search.dispatchEvent({ type: "input" });
  assert.equal(lists().length, before, "nothing asked while typing");
  assert.deepEqual(app.timers.delays.at(-1), SEARCH_DELAY_MS);
  app.timers.fireAll();
  await pump(host, app.timers, { fire: false });
  assert.deepEqual(lists().slice(before).map(([, path]) => path), ["/api/sessions?q=te"]);
  assert.deepEqual(app.$$("[data-session-id]").map((el) => el.getAttribute("data-session-id")), ["a"]);
  search.value = "zebra";
  search.dispatchEvent({ type: "keydown", key: "Enter" });
  await pump(host, app.timers, { fire: false });
  assert.equal(app.$("[data-role=no-sessions]").textContent, "No conversation matches “zebra”.");
  search.dispatchEvent({ type: "keydown", key: "Escape" });
  await pump(host, app.timers, { fire: false });
  assert.equal(search.value, "");
  assert.equal(lists().at(-1)[1], "/api/sessions");
  assert.equal(app.$$("[data-session-id]").length, 2);
});

test("search on a host without titles narrows the list by id", async () => {
  const host = fakeHost({ secondEdition: false });
  host.addSession("alpha");
  host.addSession("beta");
  const app = await mount({ host });
  await app.controller.search("ALP");
  assert.deepEqual(app.$$("[data-session-id]").map((el) => el.getAttribute("data-session-id")), ["alpha"]);
});

test("fork from a message posts atSeq after it (after its tool results) and opens the child", async () => {
  const host = fakeHost();
  host.addSession("p", {
    events: [
      user("one"),
      assistant("two", [{ id: "c1", name: "schedule_list", arguments: {} }]),
      ["tool/result", { callId: "c1", name: "schedule_list", value: [] }],
      user("three"),
    ],
  });
  const app = await mount({ host, initialSession: "p" });
  app.$("[data-seq=1] [data-action=fork]").click();
  await pump(host, app.timers);
  assert.deepEqual(host.requests.filter(([, path]) => path.endsWith("/fork")).map(([, path, body]) => [path, body]), [["/api/sessions/p/fork", { atSeq: 3 }]]);
  assert.equal(app.controller.currentId(), "p-fork");
  const seqs = app.$$("[data-role=transcript] [data-seq]").map((n) => n.getAttribute("data-seq"));
  assert.deepEqual(seqs, ["0", "1", "2"], "the copied events; the end-seed marker is hidden");
  assert.match(app.$("[data-session-id=p-fork]").textContent, /fork of “one”/);
});

test("Send while Fork is making the child goes to the child, not the parent", async () => {
  const host = fakeHost();
  host.addSession("p", { events: [user("one"), assistant("two")] });
  const app = await mount({ host, initialSession: "p" });
  const fork = host.hold("POST", "^/api/sessions/p/fork$");
  app.$("[data-seq=1] [data-action=fork]").click();
  await pump(host, app.timers);
  assert.ok(fork.arrived);
  app.$("[data-role=composer]").value = "in the child";
  app.$("[data-role=send]").click();
  await pump(host, app.timers);
  assert.equal(app.sent().length, 0, "the parent on screen is not where it goes");
  fork.release();
  await pump(host, app.timers);
  assert.equal(app.controller.currentId(), "p-fork");
  assert.deepEqual(app.sent().map(([, path]) => path), ["/api/sessions/p-fork/messages"]);
});

test("a closed conversation's stream is followed; it says closed until a message is sent, then open", async () => {
  const host = fakeHost();
  host.addSession("cold", { live: false, events: [user("before")] });
  const app = await mount({ host, initialSession: "cold" });
  const server = host.servers.get("cold");
  assert.equal(server.connections.length, 1, "watching a cold Session does not resume it");
  assert.match(app.$("[data-role=notice]").textContent, /This conversation is closed\. Sending a message opens it again\./);
  assert.equal(app.$("[data-role=transcript]").getAttribute("data-status"), "cold");
  await app.controller.send("wake up");
  await pump(host, app.timers);
  assert.equal(server.connections.length, 1, "the same stream");
  assert.equal(app.controller.currentWindow().status, "live");
  assert.equal(app.$("[data-role=transcript]").getAttribute("data-status"), "live");
  assert.equal(app.$("[data-role=notice]"), null);
  assert.equal(app.$("[data-role=pending]"), null, "the resume's own end-seed does not count as a loss");
});

test("a dropped stream shows the reconnecting indicator until the window is live again", async () => {
  const host = fakeHost();
  host.addSession("a");
  const app = await mount({ host, initialSession: "a" });
  const status = app.$("[data-role=status]");
  assert.ok(status.hasAttribute("hidden"));
  const server = host.servers.get("a");
  server.drop(server.connections[0], false);
  server.deliver(server.connections[0]);
  assert.equal(status.hasAttribute("hidden"), false);
  assert.equal(status.getAttribute("data-state"), "reconnecting");
  assert.equal(status.textContent, "Reconnecting…");
  host.summaries.get("a").live = false;
  await pump(host, app.timers);
  assert.ok(status.hasAttribute("hidden"));
  assert.equal(
    app.$("[data-session-id=a] [data-badge]").getAttribute("data-badge"),
    "cold",
    "the list is refreshed once the window recovers",
  );
});

test("the language switch translates the host's strings, persists, and re-renders plugin views", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [["note/pin", { text: "tea" }], ["turn/end", { status: "error", error: { code: "x", message: "y" } }]] });
  const storage = memoryStorage();
  const app = await mount({ host, storage, initialSession: "a" });
  assert.equal(app.$("[data-role=new-session]").textContent, "New conversation");
  app.$("[data-lang=zh]").click();
  assert.equal(storage.data.get(LANG_KEY), "zh");
  assert.equal(app.controller.lang(), "zh");
  assert.equal(app.$("[data-role=new-session]").textContent, "新建对话");
  assert.equal(app.$("[data-role=send]").textContent, "发送");
  assert.equal(app.$("[data-role=stop]").textContent, "停止");
  assert.equal(app.$("[data-role=session-search]").getAttribute("placeholder"), "搜索对话");
  assert.equal(app.$("[data-role=new-messages]").textContent, "新消息 ↓");
  assert.equal(app.$("[data-role=composer]").getAttribute("placeholder").startsWith("输入消息"), true);
  assert.equal(app.$("[data-lang=zh]").getAttribute("aria-pressed"), "true");
  assert.equal(app.root.getAttribute("lang"), "zh");
  assert.equal(app.$("[data-role=pin]").textContent, "zh:tea");
  assert.match(app.$("[data-event-type=turn/end]").textContent, /助手没能回答/);
  assert.equal(app.$("[data-role=day-separator]").textContent, "2023年11月14日周二", "dates in 中文 too");
  // A new mount starts in the saved language.
  const again = await mount({ host, storage });
  assert.equal(again.$("[data-role=send]").textContent, "发送");
});

test("without a token the page says how to get one and calls nothing", async () => {
  const app = await mount({ api: null });
  const banner = app.$("[data-role=banner]");
  assert.equal(banner.hasAttribute("hidden"), false);
  assert.match(banner.textContent, /access token/);
  app.$("[data-lang=zh]").click();
  assert.match(banner.textContent, /访问令牌/);
  await app.controller.send("x");
  assert.equal(await app.controller.newSession(), null);
  assert.equal(await app.controller.stop(), null);
  assert.equal(await app.controller.renameSession("a", "b"), false);
  assert.equal(await app.controller.deleteSession("a"), false);
  banner.querySelector("[data-action=dismiss-banner]").click();
  assert.ok(banner.hasAttribute("hidden"));
});

test("an unknown session id clears the view and says this host has no such conversation", async () => {
  const app = await mount({ initialSession: "missing" });
  assert.equal(app.controller.currentId(), null);
  assert.deepEqual(app.navigations, ["missing", null]);
  assert.match(app.$("[data-role=banner]").textContent, /This host has no conversation missing: it was deleted, or it is kept by another dsh web/);
  assert.equal(app.errors.length, 0, "an old link is not a fault of the page");
  app.$("[data-lang=zh]").click();
  assert.match(app.$("[data-role=banner]").textContent, /这个主机上没有对话 missing/);
});

test("a rejected token is explained, with a field that takes a new one without a reload", async () => {
  // The host was restarted with --new-token: the page's "t" is refused.
  const host = fakeHost({ token: "the-new-one" });
  host.addSession("a", { events: [user("hello")] });
  const saved = [];
  const app = await mount({ host, saveToken: (token) => saved.push(token) });
  const prompt = app.$("[data-role=token-prompt]");
  assert.equal(prompt.hasAttribute("hidden"), false);
  assert.match(prompt.textContent, /refused this page's access token/);
  assert.equal(app.$("[data-role=session-list] [data-session-id]"), null);
  app.$("[data-lang=zh]").click();
  assert.match(prompt.textContent, /拒绝了本页的访问令牌/);
  app.$("[data-lang=en]").click();

  const input = app.$("[data-role=token-input]");
  const form = input.closest("form");
  input.value = "not a token at all";
  form.dispatchEvent({ type: "submit" });
  await tick();
  assert.match(app.$("[data-role=token-problem]").textContent, /neither an address/);

  input.value = "http://127.0.0.1:8765/?token=still-wrong";
  form.dispatchEvent({ type: "submit" });
  await pump(host, app.timers);
  assert.match(app.$("[data-role=token-problem]").textContent, /refused that token too/);
  assert.deepEqual(saved, []);

  input.value = "http://127.0.0.1:8765/?token=the-new-one";
  form.dispatchEvent({ type: "submit" });
  await pump(host, app.timers);
  assert.ok(prompt.hasAttribute("hidden"), "accepted: the prompt goes");
  assert.deepEqual(saved, ["the-new-one"]);
  assert.ok(app.$("[data-session-id=a]"), "the list is read again, with the new token");
  app.$("[data-session-id=a]").click();
  await pump(host, app.timers);
  assert.match(app.$("[data-role=transcript]").textContent, /hello/);
});

test("without a token in a real page (an empty one), the prompt asks for it and starts once given", async () => {
  const host = fakeHost();
  host.addSession("a");
  const api = createApi({ token: "", fetch: host.fetch });
  const app = await mount({ host, api, initialSession: "a", origin: "http://127.0.0.1:9123" });
  assert.match(app.$("[data-role=token-prompt]").textContent, /no access token/);
  assert.equal(app.$("[data-role=token-input]").getAttribute("placeholder"), "http://127.0.0.1:9123/?token=…");
  // What cannot work without the token is off, and says why (not "No conversations yet").
  const create = app.$("[data-role=new-session]");
  assert.ok(create.hasAttribute("disabled"));
  assert.equal(create.getAttribute("title"), "Needs the access token first");
  assert.match(app.$("[data-role=no-sessions]").textContent, /once this page has its access token/);
  assert.equal(await app.controller.newSession(), null);
  app.$("[data-lang=zh]").click();
  assert.match(app.$("[data-role=no-sessions]").textContent, /获得访问令牌/);
  assert.equal(create.getAttribute("title"), "需要先提供访问令牌");
  app.$("[data-lang=en]").click();
  assert.equal(host.requests.length, 0, "nothing is asked without a token");
  assert.equal(await app.controller.useToken("fine"), true);
  await pump(host, app.timers);
  assert.equal(api.token(), "fine");
  assert.equal(app.controller.currentId(), "a");
  assert.equal(create.hasAttribute("disabled"), false);
  assert.equal(create.hasAttribute("title"), false);
});

test("a refused token turns New conversation off until a good one is given", async () => {
  const host = fakeHost({ token: "the-new-one" });
  const app = await mount({ host });
  const create = app.$("[data-role=new-session]");
  assert.ok(create.hasAttribute("disabled"));
  assert.match(app.$("[data-role=no-sessions]").textContent, /access token/);
  assert.equal(await app.controller.useToken("the-new-one"), true);
  await pump(host, app.timers);
  assert.equal(create.hasAttribute("disabled"), false);
  assert.match(app.$("[data-role=no-sessions]").textContent, /No conversations yet/);
});

test("the drawer: the menu opens it, Esc, the scrim or picking a session closes it", async () => {
  const host = fakeHost();
  host.addSession("a");
  const app = await mount({ host });
  const menu = app.$("[data-role=menu]");
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
  menu.click();
  assert.equal(app.root.getAttribute("data-sidebar"), "open");
  assert.equal(menu.getAttribute("aria-expanded"), "true");
  assert.equal(app.document.activeElement, app.$("[data-role=new-session]"), "focus moves into the drawer");
  const esc = app.document.keydown({ key: "Escape" });
  assert.equal(esc.defaultPrevented, true);
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
  assert.equal(app.document.activeElement, menu, "and back to the menu button");
  assert.equal(app.document.keydown({ key: "Escape" }).defaultPrevented, false, "a closed drawer leaves Esc alone");
  menu.click();
  app.$("[data-role=close-menu]").click();
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
  menu.click();
  app.$("[data-session-id=a]").click();
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
  menu.click();
  app.$("[data-role=scrim]").click();
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
});

test("shortcuts: Ctrl/⌘+K searches, Ctrl/⌘+Shift+O starts a session, / writes, ? lists them", async () => {
  const app = await mount({ mac: true });
  const search = app.$("[data-role=session-search]");
  const k = app.document.keydown({ key: "k", metaKey: true });
  assert.equal(k.defaultPrevented, true);
  assert.equal(app.document.activeElement, search);
  assert.equal(app.root.getAttribute("data-sidebar"), "open", "on a phone the drawer opens to show it");
  app.document.keydown({ key: "Escape" });
  app.document.keydown({ key: "O", ctrlKey: true, shiftKey: true });
  await pump(app.host, app.timers);
  assert.equal(app.controller.currentId(), "n1");
  app.$("[data-role=menu]").focus();
  app.document.keydown({ key: "/" });
  const composer = app.$("[data-role=composer]");
  assert.equal(app.document.activeElement, composer);
  const slash = app.document.keydown({ key: "/" });
  assert.equal(slash.defaultPrevented, false, "typing / in the composer types it");
  app.document.keydown({ key: "?" });
  assert.equal(app.$("[data-role=help]").localName, "button", "no help dialog while typing");
  app.$("[data-role=menu]").focus();
  app.document.keydown({ key: "?" });
  await tick();
  const help = app.$("dialog[data-role=help]");
  assert.ok(help.hasAttribute("open"));
  assert.deepEqual(help.querySelectorAll("[data-shortcut]").map((row) => row.getAttribute("data-shortcut")), [
    "search",
    "new-session",
    "focus-composer",
    "send",
    "newline",
    "rename",
    "delete",
    "help",
    "escape",
  ]);
  assert.match(help.querySelector("[data-shortcut=search]").textContent, /⌘ \+ K.*Search conversations/);
  assert.match(help.querySelector("[data-shortcut=rename]").textContent, /F2.*Rename/);
  assert.match(help.querySelector("[data-shortcut=delete]").textContent, /Delete.*Delete the conversation/);
  help.dispatchEvent({ type: "keydown", key: "Escape" });
  await tick();
  assert.equal(app.$("dialog[data-role=help]"), null);
  app.$("button[data-role=help]").click();
  await tick();
  assert.match(app.$("dialog[data-role=help]").textContent, /Ctrl|⌘/);
});

test("the theme toggle switches light and dark and says which is on", async () => {
  const document = new FakeDocument();
  const storage = memoryStorage();
  const theme = createTheme({ root: document.documentElement, storage, matchMedia: () => ({ matches: false }) });
  const app = await mount({ theme, storage });
  const toggle = app.$("[data-role=theme-toggle]");
  assert.equal(toggle.getAttribute("aria-pressed"), "false");
  toggle.click();
  assert.equal(document.documentElement.getAttribute("data-theme"), "dark");
  assert.equal(toggle.getAttribute("aria-pressed"), "true");
  assert.equal(toggle.getAttribute("aria-label"), "Dark mode");
  toggle.click();
  assert.equal(toggle.getAttribute("aria-pressed"), "false");
  app.controller.destroy();
});

test("older events load on demand", async () => {
  const host = fakeHost();
  host.addSession("long", { events: Array.from({ length: 230 }, (_, i) => user(`m${i}`)) });
  const app = await mount({ host, initialSession: "long" });
  assert.equal(app.$$("[data-role=transcript] [data-seq]").length, 200);
  app.$("[data-role=load-older]").click();
  await pump(host, app.timers);
  assert.equal(app.$$("[data-role=transcript] [data-seq]").length, 230);
  assert.equal(app.$("[data-role=load-older]"), null);
  app.controller.destroy();
  assert.equal(app.root.children.length, 0);
});

test("failures to create, fork or load plugins are reported, not thrown", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [user("x")] });
  host.failNext("GET", "client-modules", { status: 500, body: { error: { code: "boom", message: "modules unavailable" } } });
  const app = await mount({ host });
  assert.match(app.$("[data-role=banner]").textContent, /modules unavailable/);
  await app.controller.openSession("a");
  await pump(host, app.timers);
  assert.ok(app.$("[data-role=banner]").hasAttribute("hidden"), "opening a session clears a stale error");
  host.failNext("POST", "^/api/sessions$", { status: 500, body: { error: { code: "boom", message: "disk full" } } });
  assert.equal(await app.controller.newSession(), null);
  assert.match(app.$("[data-role=banner]").textContent, /disk full/);
  host.failNext("POST", "/fork$", { status: 422, body: { error: { code: "bad_body", message: "atSeq out of range" } } });
  assert.equal(await app.controller.forkAt(0), null);
  assert.match(app.$("[data-role=banner]").textContent, /atSeq out of range/);
  host.failNext("POST", "/cancel$", { status: 503, body: { error: { code: "host_closed", message: "shutting down" } } });
  assert.equal(await app.controller.stop(), null);
  assert.match(app.$("[data-role=banner]").textContent, /shutting down/);
  host.failNext("DELETE", ".", { status: 500, body: { error: { code: "boom", message: "cannot move the log" } } });
  const deleting = app.controller.deleteSession("a");
  await tick();
  app.$("[data-role=confirm-delete] [data-value=delete]").click();
  assert.equal(await deleting, false);
  assert.match(app.$("[data-role=banner]").textContent, /cannot move the log/);
  assert.equal(app.errors.length, 5);
});

test("scrolling: the bottom follows new events, a reader scrolled up gets the pill, own sends go down", async () => {
  const host = fakeHost();
  const server = host.addSession("long", { events: Array.from({ length: 210 }, (_, i) => user(`m${i}`)) });
  const document = new FakeDocument();
  const root = document.createElement("div");
  const timers = new FakeTimers();
  const api = createApi({ token: "t", fetch: host.fetch });
  const controller = mountApp({ document, root, api, openLive: host.openLive, timers, schedule: (fn) => fn(), importModule: async () => ({}) });
  const transcript = root.querySelector("[data-role=transcript]");
  const pill = root.querySelector("[data-role=new-messages]");
  // 10 px per child, a 500 px viewport.
  Object.defineProperty(transcript, "scrollHeight", { get: () => transcript.children.length * 10 });
  transcript.clientHeight = 500;
  transcript.scrollTop = 0;
  await controller.openSession("long");
  await pump(host, timers);
  assert.equal(transcript.scrollTop, transcript.scrollHeight, "a fresh transcript opens at the newest event");
  transcript.scrollTop = 300;
  server.append(...user("new"));
  await pump(host, timers);
  assert.equal(transcript.scrollTop, 300, "a reader scrolled up is left in place");
  assert.equal(pill.hasAttribute("hidden"), false, "and told that something arrived below");
  pill.click();
  assert.equal(transcript.scrollTop, transcript.scrollHeight);
  assert.ok(pill.hasAttribute("hidden"));
  server.append(...user("newer"));
  await pump(host, timers);
  assert.equal(transcript.scrollTop, transcript.scrollHeight, "a reader at the bottom follows new events");
  assert.ok(pill.hasAttribute("hidden"));
  transcript.scrollTop = 120;
  server.append(...user("one more"));
  await pump(host, timers);
  assert.equal(pill.hasAttribute("hidden"), false);
  transcript.scrollTop = transcript.scrollHeight - 500;
  transcript.dispatchEvent({ type: "scroll" });
  assert.ok(pill.hasAttribute("hidden"), "scrolling down to it hides the pill");
  transcript.scrollTop = 50;
  await controller.send("my own");
  assert.equal(transcript.scrollTop, transcript.scrollHeight, "the reader's own send follows the bottom");
  await pump(host, timers);
  transcript.scrollTop = 100;
  const before = transcript.scrollHeight;
  root.querySelector("[data-role=load-older]").click();
  await pump(host, timers);
  assert.equal(transcript.scrollTop, 100 + (transcript.scrollHeight - before), "the reader's place is kept");
});

test("a screen reader hears new messages only: not the history, not tool internals", async () => {
  const host = fakeHost();
  const server = host.addSession("a", { events: [user("old question"), assistant("old answer")] });
  const app = await mount({ host, initialSession: "a" });
  const announcer = app.$("[data-role=announcer]");
  assert.equal(announcer.textContent, "");
  server.append(...assistant("", [{ id: "c", name: "schedule_list", arguments: {} }]));
  server.append("tool/result", { callId: "c", name: "schedule_list", value: [] });
  server.append(...assistant("Here is the **answer**."));
  server.append("message/user", { text: "Reminder: stretch", source: { kind: "schedule" } });
  server.append("turn/end", { status: "error", error: { code: "model_unavailable", message: "no model" } });
  await pump(app.host, app.timers);
  assert.deepEqual(announcer.children.map((line) => line.textContent), [
    "Assistant: Here is the **answer**.",
    "Message from schedule",
    "The model could not be reached. Check your connection or the model settings.",
  ]);
});

test("the composer grows with its text up to a limit", async () => {
  const app = await mount();
  const composer = app.$("[data-role=composer]");
  let height = 90;
  Object.defineProperty(composer, "scrollHeight", { get: () => height });
  composer.dispatchEvent({ type: "input" });
  assert.equal(composer.style.height, "90px");
  height = 900;
  composer.dispatchEvent({ type: "input" });
  assert.equal(composer.style.height, "200px");
});

test("copy buttons reach the clipboard", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [assistant("```\nls -la\n```")] });
  const app = await mount({ host, initialSession: "a" });
  app.$("[data-role=code-block] [data-action=copy]").click();
  await tick();
  assert.deepEqual(app.copied, ["ls -la"]);
});

test("renders are coalesced into one frame by default", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [user("hi")] });
  const document = new FakeDocument();
  const root = document.createElement("div");
  const timers = new FakeTimers();
  const frames = [];
  globalThis.requestAnimationFrame = (fn) => frames.push(fn);
  try {
    const controller = mountApp({
      document,
      root,
      api: createApi({ token: "t", fetch: host.fetch }),
      openLive: host.openLive,
      timers,
      importModule: async () => demoPlugin(),
    });
    await controller.start();
    await controller.openSession("a");
    await pump(host, timers);
    assert.ok(frames.length >= 1);
    const queued = frames.length;
    for (const frame of frames.splice(0)) frame();
    assert.equal(root.querySelectorAll("[data-seq]").length, 1);
    assert.ok(queued < 5, `renders were coalesced (${queued} frames)`);
    controller.destroy();
    for (const frame of frames.splice(0)) frame();
  } finally {
    delete globalThis.requestAnimationFrame;
  }
  const fallback = mountApp({ document, root: document.createElement("div"), api: null, openLive: null });
  await fallback.start();
  await tick();
});

test("after a delete the page offers Undo for a few seconds; Undo restores it through the host and it is listed again", async () => {
  const host = fakeHost();
  host.addSession("keep", { events: [user("keep me")] });
  host.addSession("drop", { events: [user("drop me")] });
  const app = await mount({ host });
  app.$("[data-session-id=drop] [data-action=delete]").click();
  await tick();
  app.$("[data-role=confirm-delete] [data-value=delete]").click();
  await pump(host, app.timers, { fire: false });
  assert.equal(app.$("[data-session-id=drop]"), null);
  const note = app.$("[data-role=undo]");
  assert.equal(note.hasAttribute("hidden"), false);
  assert.equal(note.textContent.includes("“drop me” deleted."), true);
  note.querySelector("[data-action=undo]").click();
  await pump(host, app.timers, { fire: false });
  assert.deepEqual(host.requests.filter(([m, path]) => m === "POST" && path.endsWith("/restore")), [["POST", "/api/sessions/drop/restore", {}]]);
  assert.ok(app.$("[data-session-id=drop]"), "listed again");
  assert.ok(note.hasAttribute("hidden"));
  assert.deepEqual(app.errors, []);
});

test("Undo is gone once its time is up; a restore the host refuses is said in the banner", async () => {
  const host = fakeHost();
  host.addSession("drop", { events: [user("drop me")] });
  host.addSession("late", { events: [user("late")] });
  const app = await mount({ host });
  for (const id of ["drop", "late"]) {
    app.$(`[data-session-id=${id}] [data-action=delete]`).click();
    await tick();
    app.$("[data-role=confirm-delete] [data-value=delete]").click();
    await pump(host, app.timers, { fire: false });
  }
  assert.match(app.$("[data-role=undo]").textContent, /“late” deleted/);
  app.timers.fireAll();
  assert.ok(app.$("[data-role=undo]").hasAttribute("hidden"));
  assert.equal(host.requests.filter(([, path]) => path.endsWith("/restore")).length, 0);
  // Restored meanwhile by someone else: the host says 409, and the page says so.
  assert.equal(await app.controller.restoreSession("drop"), true);
  assert.equal(await app.controller.restoreSession("drop"), false);
  assert.match(app.$("[data-role=banner]").textContent, /already stored/);
});

test("the list follows a restore done elsewhere: a sessions frame reads it again, once for a burst", async () => {
  const host = fakeHost();
  host.addSession("keep", { events: [user("keep me")] });
  host.addSession("gone", { events: [user("gone")] });
  const app = await mount({ host, openEverywhere: host.openEverywhere });
  app.$("[data-session-id=gone] [data-action=delete]").click();
  await tick();
  app.$("[data-role=confirm-delete] [data-value=delete]").click();
  await pump(host, app.timers);
  assert.equal(app.$("[data-session-id=gone]"), null);
  const lists = () => host.requests.filter(([m, path]) => m === "GET" && path === "/api/sessions").length;
  const before = lists();
  host.restore("gone"); // the CLI, in another process: no frame
  await pump(host, app.timers);
  assert.equal(app.$("[data-session-id=gone]"), null, "nothing tells this page yet");
  host.listChanged(); // the host did something to its list
  host.listChanged();
  host.listChanged();
  await pump(host, app.timers);
  assert.ok(app.$("[data-session-id=gone]"), "listed again without a reload");
  assert.equal(lists(), before + 1, "three frames, one read");
});
