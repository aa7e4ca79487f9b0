import assert from "node:assert/strict";
import { test } from "node:test";

import { translator } from "../../host/dsh/web/static/i18n.js";
import { renderSessionList, shortId, sortSessions } from "../../host/dsh/web/static/session-list.js";
import { FakeDocument } from "./fake-dom.mjs";

const sessions = [
  { id: "old", createdAt: 1_000, live: false, length: 3, lineage: null },
  { id: "new", createdAt: 3_000, live: true, length: 0, lineage: null },
  { id: "fork-of-old", createdAt: 2_000, live: true, length: 5, lineage: { parentId: "old", forkedAt: 2 } },
];

test("sessions are listed newest first with a live or cold badge", () => {
  const document = new FakeDocument();
  const list = document.createElement("ul");
  const opened = [];
  renderSessionList({
    document,
    list,
    sessions,
    currentId: "old",
    t: translator("en"),
    lang: "en",
    onOpen: (id) => opened.push(id),
  });
  const buttons = list.querySelectorAll("[data-session-id]");
  assert.deepEqual(buttons.map((b) => b.getAttribute("data-session-id")), ["new", "fork-of-old", "old"]);
  assert.deepEqual(buttons.map((b) => b.querySelector("[data-badge]").getAttribute("data-badge")), ["live", "live", "cold"]);
  assert.equal(buttons[2].getAttribute("aria-current"), "true");
  assert.equal(buttons[0].getAttribute("aria-current"), null);
  assert.match(buttons[1].textContent, /fork of old/);
  assert.match(buttons[1].textContent, /5 events/);
  buttons[1].click();
  assert.deepEqual(opened, ["fork-of-old"]);
});

test("an empty list says so, in the reader's language", () => {
  const document = new FakeDocument();
  const list = document.createElement("ul");
  renderSessionList({ document, list, sessions: [], currentId: null, t: translator("zh"), lang: "zh", onOpen() {} });
  assert.equal(list.textContent, "还没有会话。");
});

test("ordering is stable and long ids are shortened", () => {
  const same = [{ id: "b", createdAt: 1 }, { id: "a", createdAt: 1 }, { id: "c" }];
  assert.deepEqual(sortSessions(same).map((s) => s.id), ["a", "b", "c"]);
  assert.equal(shortId("0123456789abcdef"), "0123456789ab…");
  assert.equal(shortId("short"), "short");
});
