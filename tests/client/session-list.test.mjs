import assert from "node:assert/strict";
import { test } from "node:test";

import { translator } from "../../host/dsh/web/static/i18n.js";
import { MAX_TITLE, SessionList, markWords, sessionName, shortId, sortSessions } from "../../host/dsh/web/static/session-list.js";
import { createTimeFormat } from "../../host/dsh/web/static/time.js";
import { FakeDocument } from "./fake-dom.mjs";

const sessions = [
  { id: "old", createdAt: 1_000, live: false, length: 3, lineage: null, title: "Groceries" },
  { id: "0123456789abcdef", createdAt: 3_000, live: true, length: 0, lineage: null, title: null },
  { id: "fork-of-old", createdAt: 2_000, live: true, length: 5, lineage: { parentId: "old", forkedAt: 2 }, title: "" },
];

function mount({ lang = "en", currentId = "old", list = sessions } = {}) {
  const document = new FakeDocument();
  const element = document.createElement("ul");
  document.body.appendChild(element);
  const calls = [];
  const view = new SessionList({
    document,
    list: element,
    onOpen: (id) => calls.push(["open", id]),
    onRename: (id, title) => calls.push(["rename", id, title]),
    onDelete: (id) => calls.push(["delete", id]),
  });
  const state = { sessions: list, currentId, t: translator(lang), time: createTimeFormat({ locale: "en-GB", timeZone: "UTC" }), now: 10 * 86_400_000 };
  view.render(state);
  const entries = () => element.querySelectorAll("[data-session-id]");
  const entry = (id) => element.querySelector(`[data-session-id="${id}"]`);
  return { document, element, view, calls, state, entries, entry };
}

test("conversations are listed newest first, by title or short id, saying whether each is open", () => {
  const { entries, calls } = mount();
  const items = entries();
  assert.deepEqual(items.map((b) => b.getAttribute("data-session-id")), ["0123456789abcdef", "fork-of-old", "old"]);
  assert.deepEqual(items.map((b) => b.querySelector("[data-role=session-title]").textContent), [
    "0123456789ab…",
    "fork-of-old",
    "Groceries",
  ]);
  assert.deepEqual(items.map((b) => b.querySelector("[data-badge]").getAttribute("data-badge")), ["live", "live", "cold"]);
  assert.deepEqual(items.map((b) => b.querySelector("[data-badge]").textContent), ["open", "open", "closed"]);
  assert.equal(items[2].getAttribute("aria-current"), "true");
  assert.equal(items[0].getAttribute("aria-current"), null);
  assert.match(items[1].querySelector("[data-role=fork-of]").textContent, /^fork of “Groceries”$/, "the parent by its title");
  assert.equal(items[1].querySelector("[data-role=fork]").textContent, "fork", "a fork says so beside its title");
  assert.equal(items[2].querySelector("[data-role=fork]"), null);
  assert.doesNotMatch(items[1].textContent, /events/);
  assert.match(items[2].textContent, /active 1 Jan, 00:00/, "no activity known: the creation time, in the reader's zone");
  assert.equal(items[2].querySelector("[data-action=open]").getAttribute("title"), "old", "the full id on hover");
  items[1].click();
  items[0].querySelector("[data-role=session-title]").click();
  assert.deepEqual(calls, [["open", "fork-of-old"], ["open", "0123456789abcdef"]]);
});

test("rename and delete are on every entry; only the open one's are tab stops", () => {
  const { entries, calls } = mount();
  const items = entries();
  for (const item of items) {
    for (const action of ["rename", "delete"]) {
      const button = item.querySelector(`[data-action=${action}]`);
      assert.equal(button.localName, "button");
      assert.ok(button.getAttribute("aria-label"));
      const current = item.getAttribute("aria-current") === "true";
      assert.equal(button.getAttribute("tabindex"), current ? null : "-1");
    }
  }
  items[0].querySelector("[data-action=delete]").click();
  assert.deepEqual(calls, [["delete", "0123456789abcdef"]], "delete does not open the Session");
});

test("rename is inline: Enter saves a changed title, Esc and an unchanged or empty one do not", () => {
  const { document, entry, calls, view } = mount();
  entry("old").querySelector("[data-action=rename]").click();
  let input = entry("old").querySelector("[data-role=rename-input]");
  assert.equal(input.value, "Groceries");
  assert.equal(document.activeElement, input);
  assert.equal(input.selected, true);
  assert.equal(input.getAttribute("maxlength"), String(MAX_TITLE));
  assert.equal(view.editingId, "old");
  input.value = "  Weekly shop  ";
  input.dispatchEvent({ type: "keydown", key: "Enter" });
  assert.deepEqual(calls, [["rename", "old", "Weekly shop"]]);
  assert.equal(entry("old").querySelector("[data-role=rename-input]"), null);
  assert.equal(document.activeElement, entry("old").querySelector("[data-action=open]"), "focus returns to the entry");
  assert.equal(view.editingId, null);

  for (const [value, key] of [["Other", "Escape"], ["Groceries", "Enter"], ["   ", "Enter"]]) {
    entry("old").querySelector("[data-action=rename]").click();
    input = entry("old").querySelector("[data-role=rename-input]");
    input.value = value;
    input.dispatchEvent({ type: "keydown", key });
  }
  assert.equal(calls.length, 1);
});

test("leaving the title field saves it, once; Enter that confirms an IME composition does not", () => {
  const { entry, calls } = mount();
  entry("fork-of-old").querySelector("[data-action=rename]").click();
  const input = entry("fork-of-old").querySelector("[data-role=rename-input]");
  assert.equal(input.value, "", "an untitled Session starts empty");
  input.value = "会议";
  input.dispatchEvent({ type: "keydown", key: "Enter", isComposing: true });
  assert.deepEqual(calls, []);
  input.blur();
  input.dispatchEvent({ type: "blur" });
  assert.deepEqual(calls, [["rename", "fork-of-old", "会议"]]);
});

test("the list is not redrawn under an open title field; it catches up when the field closes", () => {
  const { entry, view, state, element } = mount();
  entry("old").querySelector("[data-action=rename]").click();
  const input = entry("old").querySelector("[data-role=rename-input]");
  view.render({ ...state, sessions: [...sessions, { id: "newest", createdAt: 9_000, live: true, length: 0 }] });
  assert.equal(element.querySelector('[data-session-id="newest"]'), null);
  assert.equal(entry("old").querySelector("[data-role=rename-input]"), input);
  input.dispatchEvent({ type: "keydown", key: "Escape" });
  assert.ok(element.querySelector('[data-session-id="newest"]'));
  view.startRename("missing");
  assert.equal(view.editingId, null);
});

test("keyboard: arrows move between entries, F2 renames, Delete deletes", () => {
  const { document, entry, calls } = mount();
  entry("0123456789abcdef").querySelector("[data-action=open]").focus();
  document.keydown({ key: "ArrowDown" });
  assert.equal(document.activeElement, entry("fork-of-old").querySelector("[data-action=open]"));
  document.keydown({ key: "ArrowUp" });
  document.keydown({ key: "ArrowUp" });
  assert.equal(document.activeElement, entry("0123456789abcdef").querySelector("[data-action=open]"), "stays at the top");
  document.keydown({ key: "Delete" });
  assert.deepEqual(calls, [["delete", "0123456789abcdef"]]);
  document.keydown({ key: "F2" });
  assert.ok(entry("0123456789abcdef").querySelector("[data-role=rename-input]"));
  document.keydown({ key: "Delete" });
  assert.equal(calls.length, 1, "keys typed into the title field are the field's");
});

test("an empty list says so, in the reader's language, and a search without matches names the query", () => {
  const { element, view, state } = mount({ lang: "zh", list: [] });
  assert.equal(element.textContent, "还没有对话。");
  view.render({ ...state, query: "tea" });
  assert.equal(element.textContent, "没有与“tea”匹配的对话。");
});

test("each entry's unread count is [data-role=unread]: the number, or empty and hidden at 0", () => {
  const list = [
    { id: "a", createdAt: 3, title: "A", unread: 0 },
    { id: "b", createdAt: 2, title: "B", unread: 3 },
    { id: "c", createdAt: 1, title: "C", unread: 1 },
  ];
  const { entry, view, state } = mount({ list });
  const badge = (id) => entry(id).querySelector("[data-role=unread]");
  assert.equal(badge("a").textContent, "");
  assert.ok(badge("a").hasAttribute("hidden"));
  assert.equal(badge("b").textContent, "3");
  assert.equal(badge("b").getAttribute("aria-label"), "3 unread");
  assert.equal(badge("c").getAttribute("aria-label"), "1 unread");
  assert.equal(badge("b").hasAttribute("hidden"), false);
  // The shell's counts (the host-wide stream) win over the list's.
  view.render({ ...state, unread: (session) => (session.id === "a" ? 2 : 0) });
  assert.equal(badge("a").textContent, "2");
  assert.equal(badge("b").textContent, "");
  view.render({ ...state, t: translator("zh"), unread: () => 4 });
  assert.equal(badge("c").getAttribute("aria-label"), "4 条未读");
});

test("titles show whole (the list clamps them to two lines) with the full title on hover", () => {
  const title = "Plan the trip to the mountains with everyone, and book the train";
  const { entry } = mount({ list: [{ id: "long", createdAt: 1, title }] });
  const shown = entry("long").querySelector("[data-role=session-title]");
  assert.equal(shown.textContent, title, "not cut to a dozen characters");
  assert.equal(shown.getAttribute("title"), title);
});

test("rows say when they were last active, in words, from updatedAt or else createdAt", () => {
  const now = Date.UTC(2026, 0, 10, 12);
  const list = [
    { id: "now", createdAt: 1, updatedAt: now - 20_000 },
    { id: "minutes", createdAt: 1, updatedAt: now - 5 * 60_000 },
    { id: "hours", createdAt: now - 3 * 3_600_000 },
    { id: "days", createdAt: 1, updatedAt: Date.UTC(2026, 0, 2, 8, 30) },
  ];
  const { entry, view, state } = mount({ list });
  view.render({ ...state, now });
  const active = (id) => entry(id).querySelector("[data-role=session-active]").textContent;
  assert.deepEqual(["now", "minutes", "hours", "days"].map(active), ["active just now", "active 5 min ago", "active 3 h ago", "active 2 Jan, 08:30"]);
  view.render({ ...state, now, t: translator("zh") });
  assert.deepEqual(["now", "minutes", "hours"].map(active), ["刚刚活跃", "5 分钟前活跃", "3 小时前活跃"]);
});

test("F2 and Delete work on every entry, not only the open one; the buttons name their keys", () => {
  const { document, entry, calls } = mount({ currentId: "old" });
  const other = entry("fork-of-old");
  assert.equal(other.querySelector("[data-action=open]").hasAttribute("tabindex"), false, "every entry is a tab stop");
  assert.equal(other.querySelector("[data-action=rename]").getAttribute("aria-keyshortcuts"), "F2");
  assert.equal(other.querySelector("[data-action=delete]").getAttribute("aria-keyshortcuts"), "Delete");
  other.querySelector("[data-action=open]").focus();
  document.keydown({ key: "Delete" });
  assert.deepEqual(calls, [["delete", "fork-of-old"]]);
  document.keydown({ key: "F2" });
  assert.ok(entry("fork-of-old").querySelector("[data-role=rename-input]"));
});

test("ordering is stable, long ids are shortened and a title wins over the id", () => {
  const same = [{ id: "b", createdAt: 1 }, { id: "a", createdAt: 1 }, { id: "c" }];
  assert.deepEqual(sortSessions(same).map((s) => s.id), ["a", "b", "c"]);
  assert.equal(shortId("0123456789abcdef"), "0123456789ab…");
  assert.equal(shortId("short"), "short");
  assert.equal(sessionName({ id: "0123456789abcdef", title: " Plans " }), "Plans");
  assert.equal(sessionName({ id: "0123456789abcdef", title: "  " }), "0123456789ab…");
  assert.equal(sessionName({ id: "x" }), "x");
});

test("a redraw keeps the keyboard on the same entry and action", () => {
  const { document, entry, view, state } = mount();
  entry("fork-of-old").querySelector("[data-action=open]").focus();
  view.render({ ...state, sessions: [{ id: "newest", createdAt: 9_000, live: true, length: 0 }, ...sessions] });
  assert.equal(document.activeElement, entry("fork-of-old").querySelector("[data-action=open]"));
  entry("old").querySelector("[data-action=delete]").focus();
  view.render(state);
  assert.equal(document.activeElement, entry("old").querySelector("[data-action=delete]"));
  document.body.focus?.();
  const outside = document.createElement("button");
  document.body.appendChild(outside);
  outside.focus();
  view.render(state);
  assert.equal(document.activeElement, outside, "focus outside the list is left alone");
});

test("a search keeps the host's order and shows the message it found, the words marked as text", () => {
  const found = [
    { id: "old", createdAt: 1_000, live: false, length: 3, lineage: null, title: "Groceries", match: { seq: 4, snippet: "明天开会 <b>not bold</b>" } },
    { id: "0123456789abcdef", createdAt: 3_000, live: true, length: 2, lineage: null, title: "开会 notes" },
  ];
  const { view, state, entries } = mount({ list: found });
  view.render({ ...state, sessions: found, query: "开会" });
  const items = entries();
  assert.deepEqual(items.map((item) => item.getAttribute("data-session-id")), ["old", "0123456789abcdef"], "ranked, not re-sorted");
  const match = items[0].querySelector("[data-role=session-match]");
  assert.equal(match.textContent, "明天开会 <b>not bold</b>");
  assert.deepEqual(match.querySelectorAll("mark").map((mark) => mark.textContent), ["开会"]);
  assert.equal(match.querySelector("b"), null, "never HTML");
  assert.equal(items[1].querySelector("[data-role=session-match]"), null, "found by its title: no snippet");
  view.render({ ...state, sessions: found, query: "" });
  assert.equal(entries()[0].getAttribute("data-session-id"), "0123456789abcdef", "no query: newest first again");
  assert.equal(entries()[1].querySelector("[data-role=session-match]"), null);
});

test("markWords marks every place a word occurs, case-insensitively", () => {
  assert.deepEqual(markWords("Stretch and stretch", "STRETCH"), [
    ["Stretch", true],
    [" and ", false],
    ["stretch", true],
  ]);
  assert.deepEqual(markWords("abc", "  "), [["abc", false]]);
  assert.deepEqual(markWords("", "x"), []);
});
