import assert from "node:assert/strict";
import { test } from "node:test";

import { translator } from "../../host/dsh/web/static/i18n.js";
import { announcement, buildNode, copyableText, forkSeq } from "../../host/dsh/web/static/messages.js";
import { createTimeFormat } from "../../host/dsh/web/static/time.js";
import { toNodes } from "../../host/dsh/web/static/transcript.js";
import { FakeDocument } from "./fake-dom.mjs";

const t = translator("en");
const list = [
  { seq: 0, type: "message/user", time: 0, data: { text: "hi", source: { kind: "user" } } },
  { seq: 1, type: "message/assistant", time: 1, data: { text: "**ok**", toolCalls: [{ id: "c", name: "x", arguments: {} }] } },
  { seq: 2, type: "tool/result", time: 2, data: { callId: "c", name: "x", value: 1 } },
  { seq: 3, type: "message/user", time: 3, data: { text: "ping", source: { kind: "schedule" } } },
  { seq: 4, type: "turn/end", time: 4, data: { status: "error", error: { code: "e", message: "" } } },
  { seq: 5, type: "message/assistant", time: 5, data: { text: "  ", toolCalls: [] } },
];
const nodes = toNodes(list);

test("what copy copies, where fork forks and what a screen reader hears", () => {
  assert.deepEqual(nodes.map((node) => copyableText(node)), ["hi", "**ok**", null, null, "  "]);
  assert.deepEqual(nodes.map((node) => forkSeq(node)), [0, 2, 3, 4, 5]);
  assert.deepEqual(nodes.map((node) => announcement(node, t)), [
    null,
    "Assistant: **ok**",
    "Message from schedule",
    "The assistant could not answer.",
    null,
  ]);
  assert.equal(announcement({ kind: "presented" }, t), null);
  // A card with its follow-up folded in forks through the follow-up.
  assert.equal(forkSeq({ kind: "presented", seq: 7, followup: { seq: 9 } }), 9);
  assert.equal(forkSeq({ kind: "presented", seq: 7, followup: null }), 7);
});

test("a plugin's follow-up is a closed disclosure, never the person's bubble, and folds into its card", () => {
  const document = new FakeDocument();
  const ctx = { document, t, time: createTimeFormat({ locale: "en-GB", timeZone: "UTC" }), lang: "en", registry: null, onRenderError: () => {} };
  const alone = buildNode(nodes[2], ctx);
  assert.equal(alone.getAttribute("data-event-type"), "message/user");
  assert.equal(alone.getAttribute("data-source"), "schedule");
  assert.equal(alone.querySelector(".bubble"), null);
  assert.equal(alone.querySelector(".who").textContent, "Message from schedule");
  const details = alone.querySelector("details[data-role=followup]");
  assert.equal(details.hasAttribute("open"), false);
  assert.equal(details.querySelector("summary").textContent, "Text the assistant was given");
  assert.equal(details.querySelector("pre").textContent, "ping");
  assert.deepEqual(alone.querySelectorAll("[data-role=message-actions] button").map((b) => b.getAttribute("data-action")), ["fork"]);

  // Paired with the card of the event that delivered it.
  const events = [
    { seq: 0, type: "schedule/change", time: 0, data: {} },
    { seq: 1, type: "message/user", time: 1, data: { text: "[Scheduled reminder]\n<b>x</b>", source: { kind: "schedule", dispatchSeq: 0 } } },
  ];
  const [card, ...rest] = toNodes(events, new Map([[0, { prompt: "tea" }]]));
  assert.deepEqual(rest, [], "the follow-up has no node of its own");
  assert.deepEqual(card.followup, { seq: 1, text: "[Scheduled reminder]\n<b>x</b>", source: { kind: "schedule", dispatchSeq: 0 }, time: 1 });
  const fallback = buildNode(card, ctx);
  assert.equal(fallback.getAttribute("data-followup-seq"), "1");
  assert.equal(fallback.querySelector("[data-role=followup] pre").textContent, "[Scheduled reminder]\n<b>x</b>");
  assert.equal(fallback.querySelector("b"), null, "text, never markup");

  // A renderer may put it inside its card; the host then does not add it again.
  const seen = [];
  const registry = {
    lookup: () => (view, event, rendererCtx) => {
      seen.push(rendererCtx);
      const box = document.createElement("div");
      box.setAttribute("data-role", "card");
      box.appendChild(rendererCtx.followup.element);
      return box;
    },
  };
  const drawn = buildNode(card, { ...ctx, registry, timeZone: "Asia/Tokyo", locale: "en-GB" });
  assert.equal(drawn.querySelectorAll("[data-role=followup]").length, 1);
  assert.ok(drawn.querySelector("[data-role=card] [data-role=followup]"));
  assert.equal(seen[0].followup.seq, 1);
  assert.equal(seen[0].timeZone, "Asia/Tokyo");
  assert.equal(seen[0].locale, "en-GB");
  assert.equal(seen[0].time, ctx.time);
});

test("a message is an article with who, time and non-tab-stop actions; a node without a time has no stamp", () => {
  const document = new FakeDocument();
  const time = createTimeFormat({ locale: "en-GB", timeZone: "UTC" });
  const ctx = { document, t, time, lang: "en", registry: null, onRenderError: () => {} };
  const user = buildNode(nodes[0], ctx);
  assert.equal(user.getAttribute("role"), "article");
  assert.equal(user.getAttribute("aria-label"), "You");
  assert.equal(user.querySelector(".who").textContent, "You");
  assert.equal(user.querySelector("[data-role=stamp]").textContent, "00:00");
  assert.deepEqual(user.querySelectorAll("[data-role=message-actions] button").map((b) => b.getAttribute("data-action")), [
    "copy-message",
    "fork",
  ]);
  const untimed = buildNode({ ...nodes[0], time: null }, ctx);
  assert.equal(untimed.querySelector("[data-role=stamp]"), null);
  const presented = buildNode({ kind: "presented", seq: 9, eventType: "a/b", time: 1, view: { x: 1 }, data: {} }, ctx);
  assert.equal(presented.querySelector(".who"), null, "a plugin's card names itself");
  assert.equal(presented.getAttribute("aria-label"), "a/b");
  assert.ok(presented.querySelector("[data-role=json-fallback]"), "no registry: the JSON fallback");
});

test("a failed tool's words come from its plugin; words that throw or say nothing give the host's sentence", () => {
  const document = new FakeDocument();
  const failures = [];
  const failed = toNodes([
    { seq: 0, type: "message/assistant", time: 0, data: { text: "", toolCalls: [{ id: "c", name: "t", arguments: {} }] } },
    { seq: 1, type: "tool/result", time: 1, data: { callId: "c", name: "t", error: { code: "bad", message: "no" } } },
  ])[0];
  const ctx = (toolErrorFor) => ({ document, t, lang: "zh", registry: { lookup: () => undefined, toolErrorFor }, onRenderError: (err) => failures.push(err.message) });
  const words = (toolErrorFor) => buildNode(failed, ctx(toolErrorFor)).querySelector("[data-role=tool-error]").textContent;
  const asked = [];
  assert.equal(words(() => (error, options) => (asked.push([error, options]), "The thing did not happen: no")), "The thing did not happen: no");
  assert.deepEqual(asked, [[{ code: "bad", message: "no" }, { lang: "zh" }]]);
  assert.equal(words(() => () => null), "The assistant could not finish a step: no");
  assert.equal(words(() => () => { throw new Error("words broke"); }), "The assistant could not finish a step: no");
  assert.deepEqual(failures, ["words broke"]);
  assert.equal(words(() => undefined), "The assistant could not finish a step: no");
});

test("a model that cannot be reached is a plain sentence with Retry, its code behind a closed disclosure", () => {
  const document = new FakeDocument();
  const raw = "ConnectError: [Errno -2] Name or service not known (gave up after 4 attempts)";
  const [, failure] = toNodes([
    { seq: 0, type: "message/user", time: 0, data: { text: "hello", source: { kind: "user" } } },
    { seq: 1, type: "turn/end", time: 1, data: { status: "error", error: { code: "model_unavailable", message: raw } } },
  ]);
  for (const [lang, words] of [
    ["en", "The model could not be reached. Check your connection or the model settings."],
    ["zh", "无法连接到模型。请检查网络连接或模型设置。"],
  ]) {
    const tr = translator(lang);
    const ctx = { document, t: tr, time: createTimeFormat({ locale: "en-GB", timeZone: "UTC" }), lang, registry: null, onRenderError: () => {} };
    const element = buildNode(failure, ctx);
    assert.equal(element.querySelector(".error-text").textContent, words);
    assert.ok(!element.querySelector(".error-text").textContent.includes("Errno"));
    const details = element.querySelector("details[data-role=error-details]");
    assert.equal(details.hasAttribute("open"), false);
    assert.equal(details.querySelector("[data-role=error-code]").textContent, `model_unavailable: ${raw}`);
    const retry = element.querySelector("button[data-action=retry]");
    assert.equal(retry.textContent, tr("retry"));
    assert.equal(retry.getAttribute("title"), tr("retryTurnHint"));
    assert.equal(announcement(failure, tr), words);
  }
});

test("other turn errors keep the host's sentence; a turn error with nothing to send again has no Retry", () => {
  const document = new FakeDocument();
  const ctx = { document, t, time: createTimeFormat({ locale: "en-GB", timeZone: "UTC" }), lang: "en", registry: null, onRenderError: () => {} };
  const node = (code, retry) => ({ kind: "turn-error", seq: 4, eventType: "turn/end", time: 4, error: { code, message: "nope" }, retry });
  const other = buildNode(node("model_failed", "hi"), ctx);
  assert.equal(other.querySelector(".error-text").textContent, "The assistant could not answer: nope");
  assert.ok(other.querySelector("button[data-action=retry]") !== null);
  for (const retry of [null, "  "]) {
    assert.equal(buildNode(node("model_unavailable", retry), ctx).querySelector("button[data-action=retry]"), null);
  }
  assert.equal(buildNode(node("model_rate_limited", null), ctx).querySelector(".error-text").textContent, t("modelRateLimited"));
  assert.equal(buildNode(node("model_auth_failed", null), ctx).querySelector(".error-text").textContent, t("modelAuthFailed"));
  assert.equal(buildNode(node("toString", null), ctx).querySelector(".error-text").textContent, "The assistant could not answer: nope");
});
