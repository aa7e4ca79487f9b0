import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { test } from "node:test";

import { ConversationView } from "../../host/dsh/web/static/conversation.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";
import { toNodes } from "../../host/dsh/web/static/transcript.js";
import { FakeDocument, descendants } from "./fake-dom.mjs";

const XSS = `<img src=x onerror=alert(1)>`;
const STATIC = new URL("../../host/dsh/web/static/", import.meta.url);

function setup({ lang = "en", registry = createRegistry({ lang: () => lang }) } = {}) {
  const document = new FakeDocument();
  const root = document.createElement("div");
  root.setAttribute("data-role", "transcript");
  const calls = { fork: [], older: 0, dismiss: [], errors: [] };
  const view = new ConversationView({
    document,
    root,
    registry,
    onFork: (seq) => calls.fork.push(seq),
    onLoadOlder: () => {
      calls.older += 1;
    },
    onDismissPending: (id) => calls.dismiss.push(id),
    onRenderError: (err) => calls.errors.push(err.message),
  });
  return { document, root, view, registry, calls };
}

const events = [
  { seq: 0, type: "message/user", time: 1, data: { text: "remind me", source: { kind: "user" } } },
  {
    seq: 1,
    type: "message/assistant",
    time: 2,
    data: { text: "ok", toolCalls: [{ id: "c1", name: "schedule_create", arguments: { prompt: "tea" } }] },
  },
  { seq: 2, type: "tool/result", time: 3, data: { callId: "c1", name: "schedule_create", value: { id: "r1" } } },
  { seq: 3, type: "turn/end", time: 4, data: { status: "ok" } },
  { seq: 4, type: "schedule/change", time: 5, data: { op: "dispatch", id: "r1" } },
  { seq: 5, type: "message/user", time: 6, data: { text: "tea time", source: { kind: "schedule" } } },
  { seq: 6, type: "turn/end", time: 7, data: { status: "error", error: { code: "model_absent", message: "no model" } } },
];
const views = new Map([[4, { scheduleId: "r1", prompt: "tea" }]]);

test("every shown event is a [data-seq][data-event-type] node; presented ones carry [data-view]", () => {
  const { root, view } = setup();
  view.render({ nodes: toNodes(events, views) });
  const nodes = root.querySelectorAll("[data-seq]");
  assert.deepEqual(
    nodes.map((node) => [node.getAttribute("data-seq"), node.getAttribute("data-event-type")]),
    [
      ["0", "message/user"],
      ["1", "message/assistant"],
      ["2", "tool/result"],
      ["4", "schedule/change"],
      ["5", "message/user"],
      ["6", "turn/end"],
    ],
  );
  const presented = root.querySelectorAll("[data-view]");
  assert.equal(presented.length, 1);
  assert.equal(presented[0].getAttribute("data-view"), "schedule/change");
  assert.equal(presented[0].getAttribute("data-seq"), "4");
});

test("messages, tool calls with collapsible results and turn errors render as text", () => {
  const { root, view } = setup();
  view.render({ nodes: toNodes(events, views) });
  assert.match(root.querySelector("[data-seq=0]").textContent, /remind me/);
  assert.match(root.querySelector("[data-seq=5]").textContent, /from schedule/);
  const call = root.querySelector("[data-seq=1] [data-call-id=c1]");
  assert.equal(call.getAttribute("data-result-seq"), "2");
  assert.ok(call.querySelector("details summary"));
  assert.match(call.textContent, /"prompt": "tea"/);
  const result = root.querySelector("[data-seq=2]");
  assert.equal(result.getAttribute("data-call-id"), "c1");
  assert.equal(result.getAttribute("data-call-seq"), "1");
  assert.ok(result.querySelector("details summary"), "the result is collapsible");
  assert.match(result.textContent, /"id": "r1"/);
  const error = root.querySelector("[data-seq=6]");
  assert.match(error.textContent, /The turn failed: model_absent: no model/);
});

test("a registered renderer draws the presented node with view, event and ctx", () => {
  const registry = createRegistry({ lang: () => "zh" });
  const seen = [];
  registry.register("schedule/change", (v, event, ctx) => {
    seen.push({ v, event, ctx });
    const el = ctx.document.createElement("div");
    el.setAttribute("data-role", "reminder");
    el.textContent = `${ctx.lang}: ${v.prompt}`;
    return el;
  });
  const { root, view } = setup({ lang: "zh", registry });
  view.render({ nodes: toNodes(events, views), lang: "zh" });
  assert.equal(root.querySelector("[data-view] [data-role=reminder]").textContent, "zh: tea");
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].event, { seq: 4, type: "schedule/change", time: 5, data: { op: "dispatch", id: "r1" } });
  assert.equal(seen[0].ctx.eventType, "schedule/change");
  assert.equal(typeof seen[0].ctx.t, "function");
  assert.equal(root.querySelector("[data-role=json-fallback]"), null);
});

test("an unknown type, a throwing renderer or a non-node result falls back to expandable JSON", () => {
  const registry = createRegistry();
  registry.register("a/throws", () => {
    throw new Error("renderer bug");
  });
  registry.register("a/string", () => "<b>not a node</b>");
  const { root, view, calls } = setup({ registry });
  const typed = (seq, type) => ({ seq, type, time: 1, data: {} });
  const list = [typed(0, "a/unknown"), typed(1, "a/throws"), typed(2, "a/string")];
  const viewMap = new Map(list.map((event) => [event.seq, { payload: XSS, n: event.seq }]));
  view.render({ nodes: toNodes(list, viewMap) });
  const fallbacks = root.querySelectorAll("[data-view] details[data-role=json-fallback]");
  assert.equal(fallbacks.length, 3);
  for (const details of fallbacks) {
    assert.ok(details.querySelector("summary"));
    assert.match(details.querySelector("pre").textContent, /"payload": "<img src=x onerror=alert\(1\)>"/);
  }
  assert.deepEqual(calls.errors, ["renderer bug", "renderer for a/string returned no node"]);
});

test("hostile text stays text: no element is ever created from data", () => {
  const { root, view, document } = setup();
  const hostile = [
    { seq: 0, type: "message/user", time: 1, data: { text: XSS, source: { kind: XSS } } },
    { seq: 1, type: "message/assistant", time: 1, data: { text: XSS, toolCalls: [{ id: XSS, name: XSS, arguments: XSS }] } },
    { seq: 2, type: "tool/result", time: 1, data: { callId: XSS, name: XSS, error: { code: XSS, message: XSS } } },
    { seq: 3, type: "turn/end", time: 1, data: { status: "error", error: { code: XSS, message: XSS } } },
    { seq: 4, type: XSS.replace(/[^a-z]/g, "") + "/x", time: 1, data: {} },
  ];
  view.render({
    nodes: toNodes(hostile, new Map([[4, { html: XSS }]])),
    pending: [{ id: 1, text: XSS, state: "failed", error: XSS }],
    streaming: XSS,
  });
  assert.ok(!document.created.includes("img"), "no <img> was ever created");
  assert.equal(root.querySelectorAll("img").length, 0);
  const text = root.textContent;
  assert.ok(text.split(XSS).length - 1 >= 8, "the payload is visible, verbatim, as text");
  for (const element of descendants(root)) {
    for (const name of element.attributes.keys()) assert.ok(!name.startsWith("on"), `attribute ${name}`);
  }
});

test("unchanged nodes keep their elements; a changed node is rebuilt", () => {
  const { root, view } = setup();
  const first = toNodes(events.slice(0, 2));
  view.render({ nodes: first });
  const userEl = root.querySelector("[data-seq=0]");
  const assistantEl = root.querySelector("[data-seq=1]");
  view.render({ nodes: toNodes(events.slice(0, 3)) });
  assert.equal(root.querySelector("[data-seq=0]"), userEl, "reused");
  assert.notEqual(root.querySelector("[data-seq=1]"), assistantEl, "its tool call got a result");
});

test("a language change re-renders every node, presented ones through their renderer", () => {
  let lang = "en";
  const registry = createRegistry({ lang: () => lang });
  let renders = 0;
  registry.register("schedule/change", (v, event, ctx) => {
    renders += 1;
    const el = ctx.document.createElement("span");
    el.textContent = ctx.lang === "zh" ? "提醒" : "Reminder";
    return el;
  });
  const { root, view } = setup({ registry });
  const nodes = toNodes(events, views);
  view.render({ nodes, lang });
  view.render({ nodes, lang });
  assert.equal(renders, 1);
  lang = "zh";
  view.render({ nodes, lang });
  assert.equal(renders, 2);
  assert.equal(root.querySelector("[data-view]").firstChild.textContent, "提醒");
  assert.match(root.querySelector("[data-seq=6]").textContent, /本轮失败/);
});

test("fork buttons report their event's seq; load-older and dismiss call back", () => {
  const { root, view, calls } = setup();
  view.render({
    nodes: toNodes(events, views),
    hasOlder: true,
    pending: [
      { id: 7, text: "queued one", state: "queued", error: null },
      { id: 8, text: "bad one", state: "failed", error: "HTTP 500" },
    ],
  });
  root.querySelector("[data-seq=4] [data-role=fork]").click();
  root.querySelector("[data-seq=1] [data-role=fork]").click();
  assert.deepEqual(calls.fork, [4, 1]);
  root.querySelector("[data-role=load-older]").click();
  assert.equal(calls.older, 1);
  const pending = root.querySelectorAll("[data-role=pending]");
  assert.deepEqual(pending.map((el) => el.getAttribute("data-pending-id")), ["7", "8"]);
  assert.match(pending[0].textContent, /queued/);
  assert.match(pending[1].textContent, /not sent: HTTP 500/);
  assert.equal(pending[0].querySelector("[data-role=dismiss]"), null);
  pending[1].querySelector("[data-role=dismiss]").click();
  assert.deepEqual(calls.dismiss, [8]);
});

test("typing text, notices and the loading state of older pages are shown", () => {
  const { root, view } = setup();
  view.render({ nodes: [], streaming: "partial answer", notice: "Say something", loadingOlder: true });
  assert.match(root.querySelector("[data-role=typing]").textContent, /partial answer/);
  assert.equal(root.querySelector("[data-role=notice]").textContent, "Say something");
  const older = root.querySelector("[data-role=load-older]");
  assert.ok(older.hasAttribute("disabled"));
  view.render({ nodes: [], hasOlder: true });
  assert.ok(!root.querySelector("[data-role=load-older]").hasAttribute("disabled"));
  view.render({ nodes: [] });
  assert.equal(root.querySelector("[data-role=load-older]"), null);
  assert.equal(root.querySelector("[data-role=typing]"), null);
});

test("a node of an unknown kind still renders, as JSON", () => {
  const { root, view } = setup();
  view.render({ nodes: [{ kind: "mystery", seq: 3, eventType: "x/y", time: null }] });
  assert.ok(root.querySelector("[data-seq=3] [data-role=json-fallback]"));
});

test("no client module parses HTML or evaluates code; index.html has nothing inline", async () => {
  const files = (await readdir(STATIC)).filter((name) => name.endsWith(".js"));
  assert.ok(files.length >= 10);
  for (const name of files) {
    const source = await readFile(new URL(name, STATIC), "utf8");
    for (const banned of [/\.innerHTML\b/, /\.outerHTML\b/, /insertAdjacentHTML/, /\beval\s*\(/, /new Function\b/, /document\.write/]) {
      assert.doesNotMatch(source, banned, `${name} uses ${banned}`);
    }
  }
  const html = await readFile(new URL("index.html", STATIC), "utf8");
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, "no inline script");
  assert.doesNotMatch(html, /<style\b|\sstyle=/, "no inline style");
  assert.doesNotMatch(html, /\son[a-z]+=/i, "no inline event handler");
  assert.match(html, /<script type="module" src="\/static\/app\.js"><\/script>/);
  assert.match(html, /<link rel="stylesheet" href="\/static\/style\.css">/);
  assert.match(html, /data-role="app"/);
});
