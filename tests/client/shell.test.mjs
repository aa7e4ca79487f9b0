import assert from "node:assert/strict";
import { test } from "node:test";

import { ApiError } from "../../host/dsh/web/static/api.js";
import { LANG_KEY } from "../../host/dsh/web/static/i18n.js";
import { mountApp } from "../../host/dsh/web/static/shell.js";
import { FakeDocument } from "./fake-dom.mjs";
import { FakeServer, FakeTimers, tick } from "./fake-server.mjs";

/** An in-memory host: one FakeServer per Session, behind the createApi surface. */
function fakeHost() {
  const servers = new Map();
  const summaries = new Map();
  const calls = [];
  let clock = 10;
  const addSession = (id, { live = true, lineage = null, events = [] } = {}) => {
    const server = new FakeServer({ header: { id, version: 1 } });
    for (const [type, data] of events) server.append(type, data);
    server.flush();
    servers.set(id, server);
    clock += 1;
    summaries.set(id, { id, createdAt: clock, live, length: events.length, lineage });
    return server;
  };
  const mustHave = (id) => {
    if (!servers.has(id)) throw new ApiError(404, "not_found", `no session ${id}`);
    return servers.get(id);
  };
  const api = {
    listSessions: async () => [...summaries.values()].map((s) => ({ ...s, length: servers.get(s.id).log.length })),
    createSession: async () => {
      calls.push(["create"]);
      const id = `s${servers.size + 1}`;
      addSession(id);
      return { ...summaries.get(id) };
    },
    getSession: async (id) => {
      mustHave(id);
      return { header: { id }, live: summaries.get(id).live, length: servers.get(id).log.length, agent: null };
    },
    fork: async (id, atSeq) => {
      calls.push(["fork", id, atSeq]);
      const parent = mustHave(id);
      const child = `${id}-fork`;
      const copied = parent.log.slice(0, atSeq).map((event) => [event.type, event.data]);
      addSession(child, { lineage: { parentId: id, forkedAt: atSeq }, events: [...copied, ["session/end-seed", {}]] });
      return { ...summaries.get(child) };
    },
    sendMessage: async (id, text) => {
      calls.push(["send", id, text]);
      if (text === "refuse me") throw new ApiError(422, "bad_body", "text too long");
      summaries.get(id).live = true;
      return {};
    },
    events: (id, params) => mustHave(id).fetchEvents(params),
    clientModules: async () => [{ plugin: "ui-demo", url: "/plugins/ui-demo/demo.js", eventTypes: ["note/pin"] }],
  };
  const openLive = (id, handlers) => servers.get(id).openLive(handlers);
  return { api, openLive, servers, summaries, calls, addSession };
}

/** Run the host until nothing moves: accept streams, deliver frames and responses. */
async function pump(host, timers) {
  for (let round = 0; round < 200; round += 1) {
    let work = 0;
    await tick();
    for (const server of host.servers.values()) {
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
      server.prune();
    }
    work += timers?.fireAll() ?? 0;
    await tick();
    if (work === 0) return;
  }
  throw new Error("the fake host did not settle");
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

async function mount({ host = fakeHost(), storage = memoryStorage(), api, initialSession = null } = {}) {
  const document = new FakeDocument();
  const root = document.createElement("div");
  document.body.appendChild(root);
  const timers = new FakeTimers();
  const navigations = [];
  const errors = [];
  const controller = mountApp({
    document,
    root,
    api: api === undefined ? host.api : api,
    openLive: host.openLive,
    storage,
    navigatorLanguages: ["en-US"],
    importModule: async (url) => {
      if (url === "/plugins/ui-demo/demo.js") return demoPlugin();
      throw new Error(`no module ${url}`);
    },
    timers,
    schedule: (fn) => fn(),
    initialSession,
    onNavigate: (id) => navigations.push(id),
    onError: (err) => errors.push(err),
  });
  await controller.start();
  await pump(host, timers);
  const $ = (selector) => root.querySelector(selector);
  const $$ = (selector) => root.querySelectorAll(selector);
  return { document, root, controller, host, timers, navigations, errors, storage, $, $$ };
}

function memoryStorage() {
  const data = new Map();
  return { data, getItem: (key) => data.get(key) ?? null, setItem: (key, value) => data.set(key, value) };
}

function key(target, init) {
  return target.dispatchEvent({ type: "keydown", key: "Enter", shiftKey: false, isComposing: false, ...init });
}

test("the page exposes the stable hooks", async () => {
  const app = await mount();
  for (const role of ["new-session", "session-list", "composer", "send", "transcript"]) {
    assert.ok(app.$(`[data-role=${role}]`), role);
  }
  assert.equal(app.$("[data-role=composer]").localName, "textarea");
  assert.equal(app.$("[data-role=session-list]").localName, "ul");
  assert.equal(app.$("[data-role=send]").localName, "button");
});

test("sessions are listed newest first; opening one shows its transcript", async () => {
  const host = fakeHost();
  host.addSession("first", { live: false, events: [["message/user", { text: "old hello", source: { kind: "user" } }]] });
  host.addSession("second", {
    events: [
      ["message/user", { text: "hi", source: { kind: "user" } }],
      ["message/assistant", { text: "hello!", toolCalls: [] }],
      ["note/pin", { text: "pinned" }],
    ],
  });
  const app = await mount({ host });
  const items = app.$$("[data-role=session-list] [data-session-id]");
  assert.deepEqual(items.map((b) => b.getAttribute("data-session-id")), ["second", "first"]);
  assert.deepEqual(items.map((b) => b.querySelector("[data-badge]").textContent), ["live", "cold"]);
  items[0].click();
  await pump(host, app.timers);
  assert.deepEqual(app.navigations, ["second"]);
  const nodes = app.$$("[data-role=transcript] [data-seq][data-event-type]");
  assert.deepEqual(nodes.map((n) => n.getAttribute("data-event-type")), ["message/user", "message/assistant", "note/pin"]);
  assert.equal(app.$("[data-view=note/pin] [data-role=pin]").textContent, "en:pinned", "the plugin renders its view");
  assert.equal(app.$("[data-session-id=second]").getAttribute("aria-current"), "true");
});

test("new session creates, opens and lists it", async () => {
  const app = await mount();
  app.$("[data-role=new-session]").click();
  await pump(app.host, app.timers);
  assert.deepEqual(app.host.calls, [["create"]]);
  assert.equal(app.controller.currentId(), "s1");
  assert.deepEqual(app.navigations, ["s1"]);
  assert.ok(app.$("[data-session-id=s1]"));
  assert.match(app.$("[data-role=transcript]").textContent, /Say something to begin/);
});

test("Enter sends, Shift+Enter and IME composition do not; the message is pending until stored", async () => {
  const app = await mount();
  await app.controller.newSession();
  await pump(app.host, app.timers);
  const composer = app.$("[data-role=composer]");
  composer.value = "line one";
  assert.equal(key(composer, { shiftKey: true }), true, "Shift+Enter keeps its newline");
  assert.equal(key(composer, { isComposing: true }), true, "confirming a 中文 composition does not send");
  assert.deepEqual(app.host.calls, [["create"]]);
  assert.equal(key(composer), false, "Enter is taken over");
  await tick();
  assert.deepEqual(app.host.calls.at(-1), ["send", "s1", "line one"]);
  assert.equal(composer.value, "");
  const pending = app.$("[data-role=pending]");
  assert.match(pending.textContent, /line one/);
  assert.match(pending.textContent, /queued/);
  // The host stores the message: the pending node gives way to the event.
  app.host.servers.get("s1").append("message/user", { text: "line one", source: { kind: "user" } });
  await pump(app.host, app.timers);
  assert.equal(app.$("[data-role=pending]"), null);
  assert.match(app.$("[data-event-type=message/user]").textContent, /line one/);
  assert.match(app.$("[data-session-id=s1]").textContent, /1 event$/, "the sidebar count follows the window");
});

test("the send button submits; a refused message is shown as failed and can be dismissed", async () => {
  const app = await mount();
  await app.controller.newSession();
  await pump(app.host, app.timers);
  app.$("[data-role=composer]").value = "refuse me";
  app.$("[data-role=send]").click();
  await pump(app.host, app.timers);
  const failed = app.$("[data-role=pending]");
  assert.match(failed.textContent, /not sent: text too long/);
  failed.querySelector("[data-role=dismiss]").click();
  assert.equal(app.$("[data-role=pending]"), null);
  app.$("[data-role=composer]").value = "   ";
  app.$("[data-role=send]").click();
  await pump(app.host, app.timers);
  assert.equal(app.host.calls.filter((call) => call[0] === "send").length, 1, "blank text is not sent");
});

test("sending without a session starts one first", async () => {
  const app = await mount();
  await app.controller.send("hello there");
  await pump(app.host, app.timers);
  assert.deepEqual(app.host.calls, [["create"], ["send", "s1", "hello there"]]);
});

test("typing text streams in and gives way to the stored answer", async () => {
  const host = fakeHost();
  host.addSession("a");
  const app = await mount({ host, initialSession: "a" });
  const server = host.servers.get("a");
  server.delta("Thin");
  server.delta("king");
  await pump(host, app.timers);
  assert.match(app.$("[data-role=typing]").textContent, /Thinking/);
  server.append("message/assistant", { text: "Thinking done", toolCalls: [] });
  await pump(host, app.timers);
  assert.equal(app.$("[data-role=typing]"), null);
});

test("fork from an event posts atSeq = seq + 1 and opens the child", async () => {
  const host = fakeHost();
  host.addSession("p", {
    events: [
      ["message/user", { text: "one", source: { kind: "user" } }],
      ["message/assistant", { text: "two", toolCalls: [] }],
      ["message/user", { text: "three", source: { kind: "user" } }],
    ],
  });
  const app = await mount({ host, initialSession: "p" });
  app.$("[data-seq=1] [data-role=fork]").click();
  await pump(host, app.timers);
  assert.deepEqual(host.calls, [["fork", "p", 2]]);
  assert.equal(app.controller.currentId(), "p-fork");
  const seqs = app.$$("[data-role=transcript] [data-seq]").map((n) => n.getAttribute("data-seq"));
  assert.deepEqual(seqs, ["0", "1"], "the copied events; the end-seed marker is hidden");
  assert.match(app.$("[data-session-id=p-fork]").textContent, /fork of p/);
});

test("a cold session is read without a stream and goes live once a message is sent", async () => {
  const host = fakeHost();
  host.addSession("cold", { live: false, events: [["message/user", { text: "before", source: { kind: "user" } }]] });
  const app = await mount({ host, initialSession: "cold" });
  const server = host.servers.get("cold");
  assert.equal(server.connections.length, 0);
  assert.match(app.$("[data-role=notice]").textContent, /cold/);
  await app.controller.send("wake up");
  await pump(host, app.timers);
  assert.equal(server.connections.length, 1, "the window follows the stream now");
  assert.equal(app.controller.currentWindow().status, "live");
  assert.equal(app.$("[data-role=notice]"), null);
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
  assert.equal(app.$("[data-role=new-session]").textContent, "New session");
  app.$("[data-lang=zh]").click();
  assert.equal(storage.data.get(LANG_KEY), "zh");
  assert.equal(app.controller.lang(), "zh");
  assert.equal(app.$("[data-role=new-session]").textContent, "新建会话");
  assert.equal(app.$("[data-role=send]").textContent, "发送");
  assert.equal(app.$("[data-role=composer]").getAttribute("placeholder").startsWith("输入消息"), true);
  assert.equal(app.$("[data-lang=zh]").getAttribute("aria-pressed"), "true");
  assert.equal(app.root.getAttribute("lang"), "zh");
  assert.equal(app.$("[data-role=pin]").textContent, "zh:tea");
  assert.match(app.$("[data-event-type=turn/end]").textContent, /本轮失败/);
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
});

test("an unknown session id clears the view and reports the error", async () => {
  const app = await mount({ initialSession: "missing" });
  assert.equal(app.controller.currentId(), null);
  assert.deepEqual(app.navigations, ["missing", null]);
  assert.match(app.$("[data-role=banner]").textContent, /no session missing/);
  assert.equal(app.errors.length, 1);
});

test("a rejected token is explained", async () => {
  const host = fakeHost();
  host.api.listSessions = async () => {
    throw new ApiError(401, "unauthorized", "bad token");
  };
  const app = await mount({ host });
  assert.match(app.$("[data-role=banner]").textContent, /access token was refused/);
});

test("the menu opens the sidebar drawer and picking a session closes it", async () => {
  const host = fakeHost();
  host.addSession("a");
  const app = await mount({ host });
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
  app.$("[data-role=menu]").click();
  assert.equal(app.root.getAttribute("data-sidebar"), "open");
  app.$("[data-session-id=a]").click();
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
  app.$("[data-role=menu]").click();
  app.$("[data-role=scrim]").click();
  assert.equal(app.root.getAttribute("data-sidebar"), "closed");
});

test("older events load on demand", async () => {
  const host = fakeHost();
  const events = Array.from({ length: 230 }, (_, i) => ["message/user", { text: `m${i}`, source: { kind: "user" } }]);
  host.addSession("long", { events });
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
  host.addSession("a", { events: [["message/user", { text: "x", source: { kind: "user" } }]] });
  host.api.clientModules = async () => {
    throw new ApiError(500, "boom", "modules unavailable");
  };
  const app = await mount({ host });
  assert.match(app.$("[data-role=banner]").textContent, /modules unavailable/);
  await app.controller.openSession("a");
  assert.ok(app.$("[data-role=banner]").hasAttribute("hidden"), "opening a session clears a stale error");
  host.api.createSession = async () => {
    throw new ApiError(500, "boom", "disk full");
  };
  assert.equal(await app.controller.newSession(), null);
  assert.match(app.$("[data-role=banner]").textContent, /disk full/);
  host.api.fork = async () => {
    throw new ApiError(422, "bad_body", "atSeq out of range");
  };
  assert.equal(await app.controller.forkAt(0), null);
  assert.match(app.$("[data-role=banner]").textContent, /atSeq out of range/);
  assert.equal(app.errors.length, 3);
});

test("the view stays pinned to the bottom, and keeps its place when older events arrive", async () => {
  const host = fakeHost();
  const events = Array.from({ length: 210 }, (_, i) => ["message/user", { text: `m${i}`, source: { kind: "user" } }]);
  host.addSession("long", { events });
  const document = new FakeDocument();
  const root = document.createElement("div");
  const timers = new FakeTimers();
  const controller = mountApp({ document, root, api: host.api, openLive: host.openLive, timers, schedule: (fn) => fn(), importModule: async () => ({}) });
  const transcript = root.querySelector("[data-role=transcript]");
  // 10 px per child, a 500 px viewport.
  Object.defineProperty(transcript, "scrollHeight", { get: () => transcript.children.length * 10 });
  transcript.clientHeight = 500;
  transcript.scrollTop = 0;
  await controller.openSession("long");
  await pump(host, timers);
  assert.equal(transcript.scrollTop, transcript.scrollHeight, "a fresh transcript opens at the newest event");
  transcript.scrollTop = 300;
  host.servers.get("long").append("message/user", { text: "new", source: { kind: "user" } });
  await pump(host, timers);
  assert.equal(transcript.scrollTop, 300, "a reader scrolled up is left in place");
  transcript.scrollTop = transcript.scrollHeight - 500;
  host.servers.get("long").append("message/user", { text: "newer", source: { kind: "user" } });
  await pump(host, timers);
  assert.equal(transcript.scrollTop, transcript.scrollHeight, "a reader at the bottom follows new events");
  transcript.scrollTop = 100;
  const before = transcript.scrollHeight;
  root.querySelector("[data-role=load-older]").click();
  await pump(host, timers);
  assert.equal(transcript.scrollTop, 100 + (transcript.scrollHeight - before), "the reader's place is kept");
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

test("renders are coalesced into one frame by default", async () => {
  const host = fakeHost();
  host.addSession("a", { events: [["message/user", { text: "hi", source: { kind: "user" } }]] });
  const document = new FakeDocument();
  const root = document.createElement("div");
  const timers = new FakeTimers();
  const frames = [];
  globalThis.requestAnimationFrame = (fn) => frames.push(fn);
  try {
    const controller = mountApp({
      document,
      root,
      api: host.api,
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
  } finally {
    delete globalThis.requestAnimationFrame;
  }
  const fallback = mountApp({ document, root: document.createElement("div"), api: null, openLive: null });
  await fallback.start();
  await tick();
});
