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
  assert.deepEqual(nodes.map((node) => copyableText(node)), ["hi", "**ok**", "ping", null, "  "]);
  assert.deepEqual(nodes.map((node) => forkSeq(node)), [0, 2, 3, 4, 5]);
  assert.deepEqual(nodes.map((node) => announcement(node, t)), [
    null,
    "Assistant: **ok**",
    "You · from schedule: ping",
    "The turn failed: e",
    null,
  ]);
  assert.equal(announcement({ kind: "presented" }, t), null);
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
