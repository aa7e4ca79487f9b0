import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { test } from "node:test";

import { ConversationView } from "../../host/dsh/web/static/conversation.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";
import { createTimeFormat } from "../../host/dsh/web/static/time.js";
import { toNodes } from "../../host/dsh/web/static/transcript.js";
import { FakeDocument, descendants } from "./fake-dom.mjs";
import { FakeTimers, tick } from "./fake-server.mjs";

const XSS = `<img src=x onerror=alert(1)>`;
const STATIC = new URL("../../host/dsh/web/static/", import.meta.url);

const UTC = createTimeFormat({ locale: "en-GB", timeZone: "UTC" });
const NOW = Date.UTC(2026, 11, 1, 12, 0);

function setup({ lang = "en", registry = createRegistry({ lang: () => lang }), copied = true } = {}) {
  const document = new FakeDocument();
  const root = document.createElement("div");
  document.body.appendChild(root);
  root.setAttribute("data-role", "transcript");
  const calls = { fork: [], older: 0, pending: [], errors: [], copied: [] };
  const timers = new FakeTimers();
  const view = new ConversationView({
    document,
    root,
    registry,
    timers,
    copyText: async (text) => {
      calls.copied.push(text);
      return copied;
    },
    onFork: (seq) => calls.fork.push(seq),
    onLoadOlder: () => {
      calls.older += 1;
    },
    onPending: (action, id) => calls.pending.push([action, id]),
    onRenderError: (err) => calls.errors.push(err.message),
  });
  const render = (state) => view.render({ time: UTC, now: NOW, lang, ...state });
  return { document, root, view, render, registry, calls, timers };
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
  const { root, render } = setup();
  render({ nodes: toNodes(events, views) });
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
  assert.deepEqual(
    root.querySelectorAll("[data-message]").map((node) => node.getAttribute("data-seq")),
    ["0", "1", "4", "5"],
    "messages are the person's, the assistant's and a plugin's; tool results and turn errors are not",
  );
});

test("a tool call and its result are one closed disclosure inside the assistant's message", () => {
  const { root, render } = setup();
  render({ nodes: toNodes(events, views) });
  assert.match(root.querySelector("[data-seq=0]").textContent, /remind me/);
  assert.match(root.querySelector("[data-seq=5]").textContent, /Message from schedule/);
  const call = root.querySelector("[data-seq=1] [data-call-id=c1]");
  assert.equal(call.getAttribute("data-result-seq"), "2");
  const details = call.querySelector("details");
  assert.equal(details.hasAttribute("open"), false);
  assert.match(details.querySelector("summary").textContent, /Tool call: schedule_create · done/);
  assert.match(details.textContent, /"prompt": "tea"/);
  const result = details.querySelector("[data-seq=2][data-event-type=tool/result]");
  assert.equal(result.getAttribute("data-call-id"), "c1");
  assert.match(result.textContent, /"id": "r1"/);
  const failed = root.querySelector("[data-seq=6]");
  assert.equal(failed.querySelector(".error-text").textContent, "The assistant could not answer: no model", "a sentence, not a code");
  const developers = failed.querySelector("details[data-role=error-details]");
  assert.equal(developers.hasAttribute("open"), false, "the code is for developers, closed");
  assert.equal(developers.querySelector("summary").textContent, "Details for developers");
  assert.equal(developers.querySelector("[data-role=error-code]").textContent, "model_absent: no model");
});

test("a call still running, a failed call and an orphan result say so", () => {
  const { root, render } = setup();
  const list = [
    { seq: 0, type: "message/assistant", time: 1, data: { text: "", toolCalls: [{ id: "a", name: "slow", arguments: {} }, { id: "b", name: "bad", arguments: {} }] } },
    { seq: 1, type: "tool/result", time: 2, data: { callId: "b", name: "bad", error: { code: "invalid_arguments", message: "x is required" } } },
    { seq: 2, type: "tool/result", time: 3, data: { callId: "gone", name: "lost", value: 1 } },
  ];
  render({ nodes: toNodes(list) });
  assert.match(root.querySelector("[data-call-id=a] summary").textContent, /slow · waiting for result/);
  const failed = root.querySelector("[data-call-id=b]");
  assert.match(failed.getAttribute("class"), /tool-call-error/);
  assert.match(failed.querySelector("summary").textContent, /bad · failed/);
  assert.equal(failed.querySelector("[data-role=tool-error]").textContent, "The assistant could not finish a step: x is required");
  assert.equal(failed.querySelector("[data-role=error-code]").textContent, "invalid_arguments: x is required");
  const orphan = root.querySelector("[data-seq=2].node-tool-result");
  assert.ok(orphan.querySelector("details summary"));
  assert.match(orphan.textContent, /lost/);
  assert.equal(root.querySelector("[data-seq=0] [data-role=answer]"), null, "no empty answer bubble");
  assert.equal(root.querySelector("[data-seq=0] [data-action=copy-message]"), null, "nothing to copy");
});

test("assistant text is markdown; the person's own text is shown exactly as typed", () => {
  const { root, render } = setup();
  render({
    nodes: toNodes([
      { seq: 0, type: "message/user", time: 1, data: { text: "**not bold**\n- not a list", source: { kind: "user" } } },
      { seq: 1, type: "message/assistant", time: 2, data: { text: "**bold** and `code`\n\n```sh\nls\n```", toolCalls: [] } },
    ]),
  });
  const user = root.querySelector("[data-seq=0] .bubble");
  assert.equal(user.textContent, "**not bold**\n- not a list");
  assert.equal(user.children.length, 0);
  const answer = root.querySelector("[data-seq=1] [data-role=answer]");
  assert.equal(answer.querySelector("strong").textContent, "bold");
  assert.equal(answer.querySelector("pre code").textContent, "ls");
  assert.ok(answer.querySelector("[data-role=code-block] [data-action=copy]"));
});

test("a renderer registered after its node was drawn replaces the JSON fallback; other nodes stay", () => {
  const registry = createRegistry();
  const { root, render } = setup({ registry });
  render({ nodes: toNodes(events, views) });
  assert.ok(root.querySelector("[data-seq=4] [data-role=json-fallback]"), "no renderer yet: the fallback");
  const user = root.querySelector("[data-seq=0]");
  registry.register("schedule/change", (v, event, ctx) => {
    const el = ctx.document.createElement("div");
    el.setAttribute("data-role", "reminder");
    el.textContent = v.prompt;
    return el;
  });
  render({ nodes: toNodes(events, views) });
  assert.equal(root.querySelector("[data-seq=4] [data-role=reminder]").textContent, "tea");
  assert.equal(root.querySelector("[data-seq=4] [data-role=json-fallback]"), null);
  assert.equal(root.querySelector("[data-seq=0]"), user, "nodes without a new renderer are not redrawn");
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
  const { root, render } = setup({ lang: "zh", registry });
  render({ nodes: toNodes(events, views), lang: "zh" });
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
  const { root, render, calls } = setup({ registry });
  const typed = (seq, type) => ({ seq, type, time: 1, data: {} });
  const list = [typed(0, "a/unknown"), typed(1, "a/throws"), typed(2, "a/string")];
  const viewMap = new Map(list.map((event) => [event.seq, { payload: XSS, n: event.seq }]));
  render({ nodes: toNodes(list, viewMap) });
  const fallbacks = root.querySelectorAll("[data-view] details[data-role=json-fallback]");
  assert.equal(fallbacks.length, 3);
  for (const details of fallbacks) {
    assert.ok(details.querySelector("summary"));
    assert.match(details.querySelector("pre").textContent, /"payload": "<img src=x onerror=alert\(1\)>"/);
  }
  assert.deepEqual(calls.errors, ["renderer bug", "renderer for a/string returned no node"]);
});

test("hostile text stays text: no element is ever created from data", () => {
  const { root, render, document } = setup();
  const hostile = [
    { seq: 0, type: "message/user", time: 1, data: { text: XSS, source: { kind: XSS } } },
    { seq: 1, type: "message/assistant", time: 1, data: { text: `${XSS} [x](javascript:alert(1))`, toolCalls: [{ id: XSS, name: XSS, arguments: XSS }] } },
    { seq: 2, type: "tool/result", time: 1, data: { callId: XSS, name: XSS, error: { code: XSS, message: XSS } } },
    { seq: 3, type: "turn/end", time: 1, data: { status: "error", error: { code: XSS, message: XSS } } },
    { seq: 4, type: XSS.replace(/[^a-z]/g, "") + "/x", time: 1, data: {} },
  ];
  render({
    nodes: toNodes(hostile, new Map([[4, { html: XSS }]])),
    pending: [{ id: 1, text: XSS, state: "failed", error: XSS, reason: "rejected" }],
    streaming: XSS,
  });
  assert.ok(!document.created.includes("img"), "no <img> was ever created");
  assert.ok(!document.created.includes("a"), "no link to javascript:");
  assert.equal(root.querySelectorAll("img").length, 0);
  const text = root.textContent;
  assert.ok(text.split(XSS).length - 1 >= 8, "the payload is visible, verbatim, as text");
  assert.ok(text.includes("[x](javascript:alert(1))"));
  for (const element of descendants(root)) {
    for (const name of element.attributes.keys()) assert.ok(!name.startsWith("on"), `attribute ${name}`);
  }
});

test("unchanged nodes keep their elements; a changed node is rebuilt", () => {
  const { root, render } = setup();
  render({ nodes: toNodes(events.slice(0, 2)) });
  const userEl = root.querySelector("[data-seq=0]");
  const assistantEl = root.querySelector("[data-seq=1]");
  render({ nodes: toNodes(events.slice(0, 3)) });
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
  const { root, render } = setup({ registry });
  const nodes = toNodes(events, views);
  render({ nodes, lang });
  render({ nodes, lang });
  assert.equal(renders, 1);
  lang = "zh";
  render({ nodes, lang });
  assert.equal(renders, 2);
  assert.ok(root.querySelector("[data-view]").textContent.includes("提醒"));
  assert.match(root.querySelector("[data-seq=6] .error-text").textContent, /^助手没能回答：no model$/);
  assert.equal(root.querySelector("[data-seq=6] summary").textContent, "开发者详情");
});

test("fork reports the seq to fork through: an assistant message keeps its tool results", () => {
  const { root, render, calls } = setup();
  render({ nodes: toNodes(events, views), hasOlder: true });
  root.querySelector("[data-seq=4] [data-action=fork]").click();
  root.querySelector("[data-seq=1] [data-action=fork]").click();
  root.querySelector("[data-seq=0] [data-action=fork]").click();
  assert.deepEqual(calls.fork, [4, 2, 0]);
  assert.equal(root.querySelectorAll("[data-action=fork]").length, 4, "one per message");
  for (const button of root.querySelectorAll("[data-role=message-actions] button")) {
    assert.equal(button.getAttribute("tabindex"), "-1", "action buttons are not tab stops");
  }
  root.querySelector("[data-role=load-older]").click();
  assert.equal(calls.older, 1);
});

test("pending messages: sending and queued wait; a failed one keeps its text with Retry, Edit and Dismiss", () => {
  const { root, render, calls } = setup();
  render({
    nodes: [],
    pending: [
      { id: 6, text: "going", state: "sending", error: null, reason: null },
      { id: 7, text: "queued one", state: "queued", error: null, reason: null },
      { id: 8, text: "bad one", state: "failed", error: "HTTP 500", reason: "error" },
      { id: 9, text: "lost one", state: "failed", error: "the session restarted", reason: "lost" },
    ],
  });
  const pending = root.querySelectorAll("[data-role=pending]");
  assert.deepEqual(pending.map((el) => [el.getAttribute("data-pending-id"), el.getAttribute("data-state")]), [
    ["6", "sending"],
    ["7", "queued"],
    ["8", "failed"],
    ["9", "failed"],
  ]);
  assert.match(pending[0].textContent, /sending/);
  assert.equal(pending[0].querySelector(".bubble").getAttribute("dir"), "auto", "the person's text is isolated");
  assert.match(pending[1].textContent, /queued/);
  assert.match(pending[2].textContent, /bad one.*Not sent: HTTP 500/);
  assert.match(pending[3].textContent, /lost one.*Not stored: the session restarted/);
  assert.equal(pending[1].querySelector("[data-action=retry]"), null);
  pending[2].querySelector("[data-action=retry]").click();
  pending[2].querySelector("[data-action=edit]").click();
  pending[3].querySelector("[data-action=dismiss]").click();
  assert.deepEqual(calls.pending, [["retry", 8], ["edit", 8], ["dismiss", 9]]);
});

test("the typing indicator shows while a turn runs, with the streamed text once it comes", () => {
  const { root, render } = setup();
  render({ nodes: [], running: true });
  assert.ok(root.querySelector("[data-role=typing] .typing-dots"));
  render({ nodes: [], running: true, streaming: "partial **answer**" });
  assert.equal(root.querySelector("[data-role=typing] strong").textContent, "answer");
  render({ nodes: [], streaming: "", running: false });
  assert.equal(root.querySelector("[data-role=typing]"), null);
});

test("the streamed text is rendered as text still being written: a half-written formula or table stays text", () => {
  const { root, render } = setup();
  render({ nodes: [], running: true, streaming: "a | b\n-" });
  const typing = () => root.querySelector("[data-role=typing]");
  assert.equal(typing().querySelector("h2, table"), null, "no setext heading, no table yet");
  assert.equal(typing().querySelector("p").textContent, "a | b");
  render({ nodes: [], running: true, streaming: "$$\n\\frac{a_1}{b_" });
  assert.equal(typing().querySelector("pre.math-source").textContent, "$$\n\\frac{a_1}{b_");
  render({ nodes: [], running: true, streaming: "$$\n\\frac{a_1}{b_1}\n$$" });
  assert.ok(typing().querySelector(".math-block math mfrac"));
});

test("notices and the loading state of older pages are shown", () => {
  const { root, render } = setup();
  render({ nodes: [], notice: "Say something", loadingOlder: true });
  assert.equal(root.querySelector("[data-role=notice]").textContent, "Say something");
  const older = root.querySelector("[data-role=load-older]");
  assert.ok(older.hasAttribute("disabled"));
  render({ nodes: [], hasOlder: true });
  assert.ok(!root.querySelector("[data-role=load-older]").hasAttribute("disabled"));
  render({ nodes: [] });
  assert.equal(root.querySelector("[data-role=load-older]"), null);
});

test("a node of an unknown kind still renders, as JSON", () => {
  const { root, render } = setup();
  render({ nodes: [{ kind: "mystery", seq: 3, eventType: "x/y", time: null }] });
  assert.ok(root.querySelector("[data-seq=3] [data-role=json-fallback]"));
});

test("each day starts with a separator in the reader's zone; times show on hover with the full date", () => {
  const day = (d, h) => Date.UTC(2026, 10, d, h, 30);
  const list = [
    { seq: 0, type: "message/user", time: day(28, 9), data: { text: "old", source: { kind: "user" } } },
    { seq: 1, type: "message/user", time: day(30, 23), data: { text: "late", source: { kind: "user" } } },
    { seq: 2, type: "message/assistant", time: Date.UTC(2026, 11, 1, 0, 10), data: { text: "after midnight", toolCalls: [] } },
    { seq: 3, type: "message/user", time: Date.UTC(2026, 11, 1, 11, 0), data: { text: "today", source: { kind: "user" } } },
  ];
  const { root, render } = setup();
  render({ nodes: toNodes(list) });
  const separators = root.querySelectorAll("[data-role=day-separator]");
  assert.deepEqual(separators.map((el) => el.textContent), ["Sat 28 Nov", "Yesterday", "Today"]);
  const order = root.children.map((el) => el.getAttribute("data-role") ?? el.getAttribute("data-seq"));
  assert.deepEqual(order, ["day-separator", "0", "day-separator", "1", "day-separator", "2", "3"]);
  const stamp = root.querySelector("[data-seq=1] [data-role=stamp]");
  assert.equal(stamp.getAttribute("data-time"), "2026-11-30T23:30:00.000Z");
  assert.equal(stamp.textContent, "23:30");
  assert.match(stamp.getAttribute("title"), /Mon,? 30 Nov 2026.*23:30:00 UTC/);
  // In Shanghai (UTC+8) the late message already belongs to the next day.
  const shanghai = setup();
  shanghai.view.render({ nodes: toNodes(list), time: createTimeFormat({ locale: "en-GB", timeZone: "Asia/Shanghai" }), now: NOW });
  assert.deepEqual(shanghai.root.querySelectorAll("[data-role=day-separator]").map((el) => el.textContent), ["Sat 28 Nov", "Today"]);
  assert.equal(shanghai.root.querySelector("[data-seq=1] [data-role=stamp]").textContent, "07:30");
});

test("copy buttons copy a code block or a message's text, then say so for a moment", async () => {
  const { root, render, calls, timers } = setup();
  render({
    nodes: toNodes([
      { seq: 0, type: "message/user", time: 1, data: { text: "question", source: { kind: "user" } } },
      { seq: 1, type: "message/assistant", time: 2, data: { text: "Run:\n\n```\nnpm test\n```", toolCalls: [] } },
    ]),
  });
  const code = root.querySelector("[data-seq=1] [data-action=copy]");
  code.click();
  await tick();
  assert.deepEqual(calls.copied, ["npm test"]);
  assert.equal(code.textContent, "Copied");
  assert.equal(code.getAttribute("data-copied"), "true");
  timers.fireAll();
  assert.equal(code.textContent, "Copy");
  root.querySelector("[data-seq=1] [data-action=copy-message]").click();
  root.querySelector("[data-seq=0] [data-action=copy-message]").click();
  await tick();
  assert.deepEqual(calls.copied, ["npm test", "Run:\n\n```\nnpm test\n```", "question"]);
  const refused = setup({ copied: false });
  refused.render({ nodes: toNodes([{ seq: 0, type: "message/user", time: 1, data: { text: "x", source: { kind: "user" } } }]) });
  const button = refused.root.querySelector("[data-action=copy-message]");
  button.click();
  await tick();
  assert.equal(button.textContent, "Copy failed");
});

test("the transcript is one tab stop; arrows move between messages and Enter opens their menu", () => {
  const { document, root, render, calls } = setup();
  render({ nodes: toNodes(events, views) });
  const messages = root.querySelectorAll("[data-message]");
  assert.deepEqual(messages.map((el) => el.getAttribute("tabindex")), ["-1", "-1", "-1", "0"], "the newest message is the tab stop");
  messages[3].focus();
  document.keydown({ key: "ArrowUp" });
  assert.equal(document.activeElement, messages[2]);
  document.keydown({ key: "Home" });
  assert.equal(document.activeElement, messages[0]);
  assert.deepEqual(root.querySelectorAll("[data-message]").map((el) => el.getAttribute("tabindex")), ["0", "-1", "-1", "-1"]);
  document.keydown({ key: "ArrowDown" });
  assert.equal(document.activeElement, messages[1]);
  const enter = document.keydown({ key: "Enter" });
  assert.equal(enter.defaultPrevented, true);
  const menu = messages[1].querySelector("[data-role=message-menu]");
  assert.equal(menu.getAttribute("role"), "menu");
  const items = menu.querySelectorAll("[role=menuitem]");
  assert.deepEqual(items.map((item) => item.getAttribute("data-action")), ["copy-message", "fork"]);
  assert.equal(document.activeElement, items[0]);
  document.keydown({ key: "ArrowDown" });
  assert.equal(document.activeElement, items[1]);
  document.keydown({ key: "ArrowDown" });
  assert.equal(document.activeElement, items[0], "the menu wraps around");
  document.keydown({ key: "Escape" });
  assert.equal(messages[1].querySelector("[data-role=message-menu]"), null);
  assert.equal(document.activeElement, messages[1]);
  document.keydown({ key: "ContextMenu" });
  document.keydown({ key: "ArrowUp" });
  document.activeElement.click();
  assert.deepEqual(calls.fork, [2], "the menu forks like the button");
  assert.equal(messages[1].querySelector("[data-role=message-menu]"), null);
  assert.equal(document.activeElement, messages[1]);
  // The menu survives a re-render of an unchanged node, and goes with a rebuilt one.
  document.keydown({ key: "Enter" });
  render({ nodes: toNodes(events, views) });
  assert.ok(messages[1].querySelector("[data-role=message-menu]"));
  messages[2].focus();
  document.keydown({ key: "F10", shiftKey: true });
  assert.deepEqual(messages[2].querySelectorAll("[role=menuitem]").map((item) => item.getAttribute("data-action")), ["fork"]);
  document.keydown({ key: "Tab" });
  assert.equal(messages[2].querySelector("[data-role=message-menu]"), null);
});

test("no client module parses HTML or evaluates code; index.html has nothing inline", async () => {
  const files = (await readdir(STATIC)).filter((name) => name.endsWith(".js"));
  assert.ok(files.length >= 10);
  for (const name of files) {
    const source = await readFile(new URL(name, STATIC), "utf8");
    const banned = [
      /\.innerHTML\b/,
      /\.outerHTML\b/,
      /insertAdjacentHTML/,
      /\beval\s*\(/,
      /new Function\b/,
      /document\.write/,
      /createContextualFragment/,
      /DOMParser/,
      /setAttribute\(\s*["']style["']/,
      /["']style["']\s*:/,
    ];
    for (const pattern of banned) {
      assert.doesNotMatch(source, pattern, `${name} uses ${pattern}`);
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

test("a re-render moves nothing that did not change: focus and selection survive new events", () => {
  const { document, root, render } = setup();
  render({ nodes: toNodes(events.slice(0, 2)), pending: [{ id: 1, text: "p", state: "failed", error: "x", reason: "error" }] });
  const message = root.querySelector("[data-seq=0]");
  message.focus();
  document.moved = 0;
  render({ nodes: toNodes(events.slice(0, 4)), pending: [{ id: 1, text: "p", state: "failed", error: "x", reason: "error" }], running: true });
  assert.equal(document.activeElement, message, "the focused message kept its focus");
  assert.equal(document.moved, 0, "no element was moved");
  const retry = root.querySelector("[data-action=retry]");
  retry.focus();
  render({ nodes: toNodes(events.slice(0, 5), views), pending: [{ id: 1, text: "p", state: "failed", error: "x", reason: "error" }], running: true });
  assert.equal(document.activeElement, retry, "an unchanged pending message is the same element");
  render({ nodes: toNodes(events.slice(0, 5), views), notice: "n" });
  assert.deepEqual(
    root.children.map((el) => el.getAttribute("data-role") ?? el.getAttribute("data-seq")),
    ["day-separator", "0", "1", "4", "notice"],
  );
});
