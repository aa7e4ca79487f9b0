// The note after a delete (undo.js): it names the conversation, offers Undo
// for UNDO_MS, runs the Undo once, stays while the reader is on it, and
// says its words in the page's language.

import assert from "node:assert/strict";
import { test } from "node:test";

import { translator } from "../../host/dsh/web/static/i18n.js";
import { UNDO_MS, createUndo } from "../../host/dsh/web/static/undo.js";
import { FakeTimers } from "./fake-server.mjs";
import { FakeDocument } from "./fake-dom.mjs";

function setup(lang = "en") {
  const document = new FakeDocument();
  const timers = new FakeTimers();
  const undo = createUndo({ document, timers, t: translator(lang) });
  document.body.appendChild(undo.element);
  const $ = (selector) => undo.element.querySelector(selector);
  return { document, timers, undo, $ };
}

test("a delete's note names the conversation as text, offers Undo, and is a polite status", () => {
  const { undo, $ } = setup();
  assert.ok(undo.element.hasAttribute("hidden"), "nothing shown before a delete");
  undo.offer({ name: "<b>Plans</b>", undo: () => {} });
  assert.equal(undo.element.hasAttribute("hidden"), false);
  assert.equal(undo.element.getAttribute("role"), "status");
  assert.equal($("[data-role=undo-text]").textContent, "“<b>Plans</b>” deleted.");
  assert.equal($("[data-role=undo-text]").querySelector("b"), null, "the name is text, never markup");
  assert.equal($("[data-action=undo]").textContent, "Undo");
  assert.equal(undo.shown(), "<b>Plans</b>");
});

test("Undo is offered for UNDO_MS (about 8 s), then the note goes and its Undo with it", () => {
  const { timers, undo } = setup();
  let undone = 0;
  undo.offer({ name: "x", undo: () => (undone += 1) });
  assert.ok(UNDO_MS >= 5_000 && UNDO_MS <= 10_000);
  assert.deepEqual([...timers.pending.values()].map((timer) => timer.delay), [UNDO_MS]);
  timers.fireAll();
  assert.ok(undo.element.hasAttribute("hidden"));
  assert.equal(undo.shown(), null);
  assert.equal(undone, 0);
});

test("Undo runs once and the note goes at once; dismissing runs nothing", () => {
  const { timers, undo, $ } = setup();
  let undone = 0;
  undo.offer({ name: "x", undo: () => (undone += 1) });
  $("[data-action=undo]").click();
  $("[data-action=undo]").click();
  assert.equal(undone, 1);
  assert.ok(undo.element.hasAttribute("hidden"));
  assert.equal(timers.pending.size, 0, "its timer is cleared");
  undo.offer({ name: "y", undo: () => (undone += 1) });
  $("[data-action=dismiss-undo]").click();
  assert.ok(undo.element.hasAttribute("hidden"));
  assert.equal(undone, 1);
});

test("a second delete replaces the note: only the latest is undone, on its own full time", () => {
  const { timers, undo, $ } = setup();
  const undone = [];
  undo.offer({ name: "first", undo: () => undone.push("first") });
  undo.offer({ name: "second", undo: () => undone.push("second") });
  assert.equal(timers.pending.size, 1, "one timer, the second's");
  assert.equal($("[data-role=undo-text]").textContent, "“second” deleted.");
  $("[data-action=undo]").click();
  assert.deepEqual(undone, ["second"]);
});

test("the note stays while the pointer or focus is on it, and counts again from its leaving", () => {
  const { timers, undo } = setup();
  undo.offer({ name: "x", undo: () => {} });
  undo.element.dispatchEvent({ type: "pointerenter" });
  assert.equal(timers.pending.size, 0);
  timers.fireAll();
  assert.equal(undo.shown(), "x");
  undo.element.dispatchEvent({ type: "pointerleave" });
  assert.deepEqual([...timers.pending.values()].map((timer) => timer.delay), [UNDO_MS]);
  undo.element.dispatchEvent({ type: "focusin" });
  assert.equal(timers.pending.size, 0);
  undo.element.dispatchEvent({ type: "focusout" });
  timers.fireAll();
  assert.equal(undo.shown(), null);
});

test("its words follow the page's language", () => {
  const { undo, $ } = setup("zh");
  undo.offer({ name: "计划", undo: () => {} });
  assert.equal($("[data-role=undo-text]").textContent, "“计划”已删除。");
  assert.equal($("[data-action=undo]").textContent, "撤销");
  assert.equal($("[data-action=dismiss-undo]").getAttribute("aria-label"), "关闭");
  undo.applyLang(translator("en"));
  assert.equal($("[data-role=undo-text]").textContent, "“计划” deleted.");
  assert.equal($("[data-action=dismiss-undo]").getAttribute("aria-label"), "Dismiss");
});
