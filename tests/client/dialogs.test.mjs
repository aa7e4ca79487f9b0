import assert from "node:assert/strict";
import { test } from "node:test";

import { confirmDelete, openDialog, pendingReminders, showHelp } from "../../host/dsh/web/static/dialogs.js";
import { translator } from "../../host/dsh/web/static/i18n.js";
import { FakeDocument, descendants } from "./fake-dom.mjs";

function setup() {
  const document = new FakeDocument();
  const host = document.createElement("div");
  const opener = document.createElement("button");
  document.body.append(host, opener);
  opener.focus();
  return { document, host, opener };
}

test("a dialog is a modal <dialog>: the primary action has focus, the choice resolves it, focus returns", async () => {
  const { document, host, opener } = setup();
  const result = openDialog({
    document,
    host,
    role: "ask",
    title: "Really?",
    body: ["Some <b>text</b>"],
    actions: [
      { label: "No", value: "no" },
      { label: "Yes", value: "yes", primary: true },
    ],
    closeLabel: "Close",
  });
  const dialog = host.querySelector("dialog[data-role=ask]");
  assert.ok(dialog.hasAttribute("open"));
  assert.equal(dialog.getAttribute("aria-labelledby"), "ask-title");
  assert.equal(dialog.querySelector("h2").getAttribute("id"), "ask-title");
  assert.equal(dialog.querySelector("h2").textContent, "Really?");
  assert.match(dialog.textContent, /Some <b>text<\/b>/);
  assert.equal(descendants(dialog).filter((el) => el.localName === "b").length, 0);
  assert.equal(document.activeElement, dialog.querySelector("[data-value=yes]"));
  dialog.querySelector("[data-value=yes]").click();
  assert.equal(await result, "yes");
  assert.equal(host.querySelector("dialog"), null);
  assert.equal(document.activeElement, opener);
});

test("Esc, the close button, a click on the backdrop and the native cancel all dismiss", async () => {
  const { document, host } = setup();
  const open = () =>
    openDialog({ document, host, role: "d", title: "T", actions: [{ label: "OK", value: 1 }], closeLabel: "Close" });
  const dialog = () => host.querySelector("dialog");
  let result = open();
  dialog().dispatchEvent({ type: "keydown", key: "Escape" });
  assert.equal(await result, null);
  result = open();
  dialog().dispatchEvent({ type: "keydown", key: "a" });
  assert.ok(dialog(), "other keys do nothing");
  dialog().querySelector("[data-action=close]").click();
  assert.equal(await result, null);
  result = open();
  dialog().querySelector(".dialog-panel").click();
  assert.ok(dialog(), "a click inside the panel is not a dismissal");
  dialog().click();
  assert.equal(await result, null);
  result = open();
  dialog().dispatchEvent({ type: "cancel" });
  assert.equal(await result, null);
  result = open();
  dialog().close();
  assert.equal(await result, null);
});

test("without showModal (an old browser) the dialog is opened by its attribute", async () => {
  const { document, host } = setup();
  const create = document.createElement.bind(document);
  document.createElement = (tag) => {
    const element = create(tag);
    if (tag === "dialog") element.showModal = undefined;
    return element;
  };
  const result = openDialog({ document, host, role: "x", title: "T", actions: [{ label: "OK", value: "ok" }] });
  assert.ok(host.querySelector("dialog").hasAttribute("open"));
  host.querySelector("[data-value=ok]").click();
  assert.equal(await result, "ok");
});

test("confirmDelete names the Session, offers Cancel, and resolves true only for Delete", async () => {
  const { document, host } = setup();
  const t = translator("zh");
  let answer = confirmDelete({ document, host, t, name: "<b>Plans</b>" });
  const dialog = host.querySelector("[data-role=confirm-delete]");
  assert.match(dialog.textContent, /删除此对话？/);
  assert.match(dialog.textContent, /“<b>Plans<\/b>”将从列表中移除/);
  assert.match(dialog.querySelector("[data-value=delete]").getAttribute("class"), /danger/);
  dialog.querySelector("[data-value=cancel]").click();
  assert.equal(await answer, false);
  answer = confirmDelete({ document, host, t, name: "x" });
  host.querySelector("[data-value=delete]").click();
  assert.equal(await answer, true);
});

test("confirmDelete says how many pending reminders stop, and nothing about reminders when the count is unknown", async () => {
  for (const [lang, reminders, said] of [
    ["en", 3, "Its 3 pending reminders stop."],
    ["en", 1, "Its pending reminder stops."],
    ["zh", 2, "它待发的 2 个提醒将停止。"],
  ]) {
    const { document, host } = setup();
    const answer = confirmDelete({ document, host, t: translator(lang), name: "x", id: "s-1", reminders });
    assert.equal(host.querySelector("[data-role=delete-stops]").textContent, said);
    host.querySelector("[data-value=cancel]").click();
    await answer;
  }
  for (const reminders of [null, 0, undefined]) {
    const { document, host } = setup();
    const answer = confirmDelete({ document, host, t: translator("en"), name: "x", id: "s-1", reminders });
    assert.equal(host.querySelector("[data-role=delete-stops]"), null, String(reminders));
    assert.doesNotMatch(host.textContent, /reminder/);
    host.querySelector("[data-value=cancel]").click();
    await answer;
  }
});

test("confirmDelete renders the restore command, with the Session's id, as a <code> element and no backticks", async () => {
  for (const lang of ["en", "zh"]) {
    const { document, host } = setup();
    const answer = confirmDelete({ document, host, t: translator(lang), name: "x", id: "<i>s-1</i>" });
    const hint = host.querySelector("[data-role=confirm-delete] .hint");
    const code = hint.querySelector("code");
    assert.equal(code.textContent, "dsh sessions restore <i>s-1</i>");
    assert.equal(code.querySelector("i"), null, "the id is text, never markup");
    assert.doesNotMatch(hint.textContent, /`|\{command\}/);
    assert.match(hint.textContent, lang === "en" ? /trash; dsh sessions restore <i>s-1<\/i> brings it back/ : /回收站中；dsh sessions restore/);
    host.querySelector("[data-value=cancel]").click();
    await answer;
  }
});

test("pendingReminders counts the open Session's full states first, else the list's summary, else says it does not know", () => {
  const summary = { plugins: { "tool-schedule": { reminders: 4, next: "2026-03-02T12:00:00.000Z" } } };
  assert.equal(pendingReminders({ states: { "tool-schedule": { reminders: [{}, {}] } }, summary }), 2);
  assert.equal(pendingReminders({ states: { "tool-schedule": { reminders: [] } }, summary }), 0);
  assert.equal(pendingReminders({ states: { other: { x: 1 } }, summary }), 4);
  assert.equal(pendingReminders({ summary }), 4);
  assert.equal(pendingReminders({ summary: { plugins: { a: { reminders: 1 }, b: { reminders: 2 } } } }), 3);
  assert.equal(pendingReminders({ summary: { plugins: { a: { reminders: -1 } } } }), null);
  assert.equal(pendingReminders({ summary: { plugins: { a: { reminders: [1] } } } }), null, "a summary carries a count, not a list");
  assert.equal(pendingReminders({ summary: { id: "s" } }), null);
  assert.equal(pendingReminders(), null);
});

test("help lists every shortcut with its keys", async () => {
  const { document, host } = setup();
  const shown = showHelp({ document, host, t: translator("en"), mac: false });
  const rows = host.querySelectorAll("[data-shortcut]");
  assert.equal(rows.length, 9);
  assert.deepEqual(rows[1].querySelectorAll("kbd").map((k) => k.textContent), ["Ctrl", "Shift", "O"]);
  assert.match(rows[1].textContent, /New conversation/);
  // The list's own keys are named too: F2 renames, Delete deletes the focused entry.
  const byAction = (action) => host.querySelector(`[data-shortcut=${action}]`);
  assert.deepEqual(byAction("rename").querySelectorAll("kbd").map((k) => k.textContent), ["F2"]);
  assert.match(byAction("rename").textContent, /Rename the conversation in focus/);
  assert.deepEqual(byAction("delete").querySelectorAll("kbd").map((k) => k.textContent), ["Delete"]);
  assert.match(byAction("delete").textContent, /Delete the conversation in focus/);
  host.querySelector("[data-value=close]").click();
  assert.equal(await shown, "close");
});

test("a row redrawn while the dialog was open gets the focus back on its same control", async () => {
  const document = new FakeDocument();
  const host = document.createElement("div");
  const row = (id) => {
    const item = document.createElement("li");
    item.setAttribute("data-session-id", id);
    const open = document.createElement("button");
    open.setAttribute("data-action", "open");
    item.append(open);
    return item;
  };
  const list = document.createElement("ul");
  list.append(row("a1"), row("b2"));
  document.body.append(host, list);
  list.querySelector('[data-session-id="b2"] [data-action="open"]').focus();
  const result = openDialog({ document, host, role: "ask", title: "Delete?", actions: [{ label: "No", value: "no" }], closeLabel: "Close" });
  list.replaceChildren(row("a1"), row("b2")); // the list redrew its rows meanwhile
  host.querySelector("[data-value=no]").click();
  assert.equal(await result, "no");
  assert.equal(document.activeElement, list.querySelector('[data-session-id="b2"] [data-action="open"]'));
});
