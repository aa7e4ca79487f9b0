import assert from "node:assert/strict";
import { test } from "node:test";

import { ConversationView } from "../../host/dsh/web/static/conversation.js";
import { translator } from "../../host/dsh/web/static/i18n.js";
import {
  LiveReasoningBlock,
  ReasoningStream,
  deltaChannel,
  reasoningBlock,
  reasoningLabel,
  storedReasoning,
  thoughtMs,
  wholeSeconds,
} from "../../host/dsh/web/static/reasoning.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";
import { SessionWindow } from "../../host/dsh/web/static/session-window.js";
import { toNodes } from "../../host/dsh/web/static/transcript.js";
import { FakeDocument, descendants } from "./fake-dom.mjs";
import { FakeTimers, tick } from "./fake-server.mjs";

const XSS = `<img src=x onerror=alert(1)>`;
const en = translator("en");
const zh = translator("zh");

function user(seq, time) {
  return { seq, type: "message/user", time, data: { text: "remind me", source: { kind: "user" } } };
}

function answer(seq, time, data) {
  return { seq, type: "message/assistant", time, data: { text: "", toolCalls: [], ...data } };
}

function view({ lang = "en" } = {}) {
  const document = new FakeDocument();
  const root = document.createElement("div");
  const conversation = new ConversationView({
    document,
    root,
    registry: createRegistry({ lang: () => lang }),
  });
  return { document, root, conversation };
}

// ---- the pieces ----------------------------------------------------------

test("a delta frame is reasoning only when it says so; one without a channel is answer text", () => {
  assert.equal(deltaChannel({ kind: "delta", channel: "reasoning", text: "x" }), "reasoning");
  assert.equal(deltaChannel({ kind: "delta", channel: "answer", text: "x" }), "answer");
  assert.equal(deltaChannel({ kind: "delta", text: "x" }), "answer");
  assert.equal(deltaChannel(null), "answer");
});

test("live reasoning joins its fragments and times the first to the latest", () => {
  let now = 10_000;
  const stream = new ReasoningStream(() => now);
  assert.equal(stream.snapshot(), null);
  assert.equal(stream.add(""), false);
  assert.equal(stream.add(7), false);
  assert.equal(stream.add("Weigh "), true);
  now = 13_400;
  stream.add("it.");
  assert.deepEqual(stream.snapshot(), { text: "Weigh it.", ms: 3400 });
  assert.ok(Object.isFrozen(stream.snapshot()));
  stream.clear();
  assert.equal(stream.snapshot(), null);
  now = 20_000;
  stream.add("again");
  assert.deepEqual(stream.snapshot(), { text: "again", ms: 0 });
});

test("stored reasoning is a non-empty string or nothing", () => {
  assert.equal(storedReasoning({ reasoning: "why" }), "why");
  for (const data of [{}, { reasoning: "" }, { reasoning: ["x"] }, null, undefined]) {
    assert.equal(storedReasoning(data), null);
  }
});

test("the stored time is the gap from the event just before, when that one is known", () => {
  assert.equal(thoughtMs(user(4, 1000), answer(5, 7400)), 6400);
  assert.equal(thoughtMs(user(3, 1000), answer(5, 7400)), null, "not the event just before");
  assert.equal(thoughtMs(null, answer(0, 7400)), null);
  assert.equal(thoughtMs({ seq: 4 }, answer(5, 7400)), null);
  assert.equal(thoughtMs(user(4, 9000), answer(5, 7400)), 0, "a clock step back is no negative time");
  assert.deepEqual([wholeSeconds(0), wholeSeconds(1499), wholeSeconds(1500), wholeSeconds(null)], [1, 1, 2, null]);
});

test("labels in both languages: live, stored with a number, stored without one", () => {
  assert.equal(reasoningLabel(en, { ms: 4200, live: true }), "Thinking… 4 s");
  assert.equal(reasoningLabel(en, { live: true }), "Thinking…");
  assert.equal(reasoningLabel(en, { ms: 6400 }), "Thought for about 6 s");
  assert.equal(reasoningLabel(en, {}), "Thoughts");
  assert.equal(reasoningLabel(zh, { ms: 4200, live: true }), "思考中… 4 秒");
  assert.equal(reasoningLabel(zh, { ms: 6400 }), "思考了约 6 秒");
  assert.equal(reasoningLabel(zh), "思考过程");
});

test("the block is a closed disclosure whose text stays text", () => {
  const document = new FakeDocument();
  const block = reasoningBlock(document, en, { text: XSS, ms: 2000 });
  assert.equal(block.tagName.toLowerCase(), "details");
  assert.equal(block.getAttribute("data-role"), "reasoning");
  assert.ok(!block.hasAttribute("open"), "collapsed");
  assert.equal(block.querySelector("summary").textContent, "Thought for about 2 s");
  assert.equal(block.querySelector(".reasoning-text").textContent, XSS);
  assert.equal(descendants(block).filter((node) => node.tagName?.toLowerCase() === "img").length, 0);
});

test("the live block is one element, updated in place, until the stream ends", () => {
  const document = new FakeDocument();
  const live = new LiveReasoningBlock();
  const first = live.element(document, en, { text: "a", ms: 0 });
  first.setAttribute("open", "");
  const second = live.element(document, zh, { text: "ab", ms: 3000 });
  assert.equal(second, first);
  assert.ok(second.hasAttribute("open"), "a reader who opened it keeps it open");
  assert.equal(second.querySelector("summary").textContent, "思考中… 3 秒");
  assert.equal(second.querySelector(".reasoning-text").textContent, "ab");
  assert.equal(live.element(document, en, null), null);
  assert.notEqual(live.element(document, en, { text: "new", ms: 0 }), first, "a new stream, a new block");
});

// ---- the call sites --------------------------------------------------------

test("an assistant message shows its stored reasoning collapsed above the answer, never in it", () => {
  const events = [
    user(0, 1000),
    answer(1, 7400, { text: "Setting it.", reasoning: `Ten seconds ${XSS}` }),
    answer(2, 8000, { text: "plain" }),
  ];
  const nodes = toNodes(events);
  assert.equal(nodes[1].reasoning, `Ten seconds ${XSS}`);
  assert.equal(nodes[1].thoughtMs, 6400);
  assert.equal(nodes[2].reasoning, null);

  const { root, conversation } = view();
  conversation.render({ nodes });
  const node = root.querySelector("[data-seq=1]");
  const parts = node.children.map((child) => child.getAttribute("class") ?? child.tagName.toLowerCase());
  assert.deepEqual(parts.slice(0, 3), ["meta", "reasoning", "bubble md"], "who, then the reasoning, then the answer");
  const block = node.querySelector("[data-role=reasoning]");
  assert.ok(!block.hasAttribute("open"));
  assert.equal(block.querySelector("summary").textContent, "Thought for about 6 s");
  assert.equal(node.querySelector(".bubble").textContent, "Setting it.");
  assert.equal(root.querySelector("[data-seq=2] [data-role=reasoning]"), null);
  assert.equal(root.querySelectorAll("img").length, 0);
});

test("reasoning at the top of a page has no known duration and says only Thoughts / 思考过程", () => {
  const nodes = toNodes([answer(40, 5000, { reasoning: "why" })]);
  for (const [lang, label] of [["en", "Thoughts"], ["zh", "思考过程"]]) {
    const { root, conversation } = view({ lang });
    conversation.render({ nodes, lang });
    assert.equal(root.querySelector("[data-role=reasoning] summary").textContent, label);
  }
});

test("live reasoning fills a block in the typing node before any answer text arrives", () => {
  const { root, conversation } = view();
  conversation.render({ nodes: [], streaming: "", reasoning: { text: "Hmm", ms: 1200 } });
  const typing = root.querySelector("[data-role=typing]");
  const block = typing.querySelector("[data-role=reasoning]");
  assert.equal(block.getAttribute("data-live"), "true");
  assert.equal(block.querySelector("summary").textContent, "Thinking… 1 s");
  assert.equal(typing.querySelector(".bubble"), null);
  block.setAttribute("open", "");

  conversation.render({ nodes: [], streaming: "Hel", reasoning: { text: "Hmm.", ms: 2600 } });
  const again = root.querySelector("[data-role=typing] [data-role=reasoning]");
  assert.equal(again, block, "the same element: still open");
  assert.ok(again.hasAttribute("open"));
  assert.equal(again.querySelector(".reasoning-text").textContent, "Hmm.");
  assert.equal(root.querySelector("[data-role=typing] .bubble").textContent, "Hel");

  conversation.render({ nodes: [] });
  assert.equal(root.querySelector("[data-role=typing]"), null);
});

test("the session window keeps reasoning deltas apart from the answer and drops both at the answer", async () => {
  const handlers = [];
  const win = new SessionWindow({
    fetchEvents: async () => ({ header: { id: "s1" }, events: [user(0, 1)], views: {}, attached: true, tail: 1 }),
    openLive: (live) => {
      handlers.push(live);
      return { close() {} };
    },
    timers: new FakeTimers(),
  });
  win.start();
  handlers[0].onFrame({ kind: "hello", tail: 1 });
  await tick();
  assert.equal(win.snapshot().status, "live");

  handlers[0].onFrame({ kind: "delta", channel: "reasoning", text: "Weigh " });
  handlers[0].onFrame({ kind: "delta", channel: "reasoning", text: "it." });
  handlers[0].onFrame({ kind: "delta", channel: "answer", text: "Hel" });
  handlers[0].onFrame({ kind: "delta", text: "lo" });
  const snap = win.snapshot();
  assert.equal(snap.streaming, "Hello");
  assert.equal(snap.reasoning.text, "Weigh it.");
  assert.ok(snap.reasoning.ms >= 0);

  handlers[0].onFrame({ kind: "event", event: answer(1, 2, { text: "Hello", reasoning: "Weigh it." }) });
  assert.equal(win.snapshot().streaming, "");
  assert.equal(win.snapshot().reasoning, null);

  handlers[0].onFrame({ kind: "delta", channel: "reasoning", text: "next" });
  handlers[0].onClose({});
  assert.equal(win.snapshot().reasoning, null, "live reasoning never outlives its stream");
  win.close();
});
