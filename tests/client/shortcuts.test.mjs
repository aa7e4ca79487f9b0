import assert from "node:assert/strict";
import { test } from "node:test";

import { SHORTCUTS, installShortcuts, isEditable, isMac, shortcutFor } from "../../host/dsh/web/static/shortcuts.js";
import { FakeDocument } from "./fake-dom.mjs";

test("each shortcut is recognised with Ctrl or ⌘, and nothing else is", () => {
  assert.equal(shortcutFor({ key: "k", ctrlKey: true }), "search");
  assert.equal(shortcutFor({ key: "K", metaKey: true }), "search");
  assert.equal(shortcutFor({ key: "o", ctrlKey: true, shiftKey: true }), "new-session");
  assert.equal(shortcutFor({ key: "O", metaKey: true, shiftKey: true }), "new-session");
  assert.equal(shortcutFor({ key: "/" }), "focus-composer");
  assert.equal(shortcutFor({ key: "?", shiftKey: true }), "help");
  assert.equal(shortcutFor({ key: "Escape" }), "escape");
  for (const event of [
    { key: "k" },
    { key: "k", ctrlKey: true, shiftKey: true },
    { key: "k", ctrlKey: true, altKey: true },
    { key: "o", ctrlKey: true },
    { key: "/", ctrlKey: true },
    { key: "k", ctrlKey: true, isComposing: true },
    { key: "Process", keyCode: 229 },
    { key: undefined },
  ]) {
    assert.equal(shortcutFor(event), null, JSON.stringify(event));
  }
});

test("one-key shortcuts are ignored while typing; handled keys lose their default", () => {
  const document = new FakeDocument();
  const field = document.createElement("textarea");
  const button = document.createElement("button");
  document.body.append(field, button);
  const seen = [];
  const remove = installShortcuts({
    target: document,
    handlers: {
      search: () => seen.push("search"),
      "focus-composer": () => seen.push("focus"),
      help: () => seen.push("help"),
      escape: () => false,
    },
  });
  field.focus();
  assert.equal(document.keydown({ key: "/" }).defaultPrevented, false);
  assert.equal(document.keydown({ key: "?" }).defaultPrevented, false);
  assert.equal(document.keydown({ key: "k", ctrlKey: true }).defaultPrevented, true, "chords work while typing");
  button.focus();
  assert.equal(document.keydown({ key: "/" }).defaultPrevented, true);
  assert.equal(document.keydown({ key: "?" }).defaultPrevented, true);
  assert.equal(document.keydown({ key: "Escape" }).defaultPrevented, false, "a handler returning false keeps the default");
  assert.equal(document.keydown({ key: "o", ctrlKey: true, shiftKey: true }).defaultPrevented, false, "no handler");
  assert.deepEqual(seen, ["search", "focus", "help"]);
  remove();
  document.keydown({ key: "/" });
  assert.equal(seen.length, 3);
});

test("editable targets and platforms", () => {
  const document = new FakeDocument();
  const editable = document.createElement("div");
  editable.setAttribute("contenteditable", "true");
  const inner = document.createElement("span");
  editable.appendChild(inner);
  assert.equal(isEditable(inner), true);
  assert.equal(isEditable(document.createElement("input")), true);
  assert.equal(isEditable(document.createElement("button")), false);
  assert.equal(isEditable(null), false);
  assert.equal(isMac({ platform: "MacIntel" }), true);
  assert.equal(isMac({ userAgentData: { platform: "macOS" } }), true);
  assert.equal(isMac({ platform: "Linux x86_64" }), false);
  assert.equal(isMac(undefined), false);
  assert.deepEqual(SHORTCUTS.find((s) => s.action === "search").keys(true), ["⌘", "K"]);
  assert.deepEqual(SHORTCUTS.find((s) => s.action === "search").keys(false), ["Ctrl", "K"]);
});
