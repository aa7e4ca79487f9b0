// Bidirectional text (issue 35): a U+202E in a title, a message or a link
// reversed what the page showed after it. User and model text is isolated
// (`dir="auto"`) everywhere it is shown, and a bare URL's label shows its
// bidi controls the way its href carries them.

import assert from "node:assert/strict";
import { test } from "node:test";

import { BIDI_CONTROLS, isolate, visibleBidi } from "../../host/dsh/web/static/bidi.js";
import { createHeader } from "../../host/dsh/web/static/header.js";
import { translator } from "../../host/dsh/web/static/i18n.js";
import { renderMarkdown } from "../../host/dsh/web/static/markdown-dom.js";
import { buildNode } from "../../host/dsh/web/static/messages.js";
import { reasoningBlock } from "../../host/dsh/web/static/reasoning.js";
import { SessionList } from "../../host/dsh/web/static/session-list.js";
import { createTimeFormat } from "../../host/dsh/web/static/time.js";
import { toNodes } from "../../host/dsh/web/static/transcript.js";
import { FakeDocument, descendants } from "./fake-dom.mjs";

const RLO = "\u202e";
const t = translator("en");
const time = createTimeFormat({ locale: "en-GB", timeZone: "UTC" });

test("the controls are the embeddings, overrides, isolates and marks, and only those", () => {
  const controls = [..."\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"];
  for (const control of controls) assert.equal(control.replace(BIDI_CONTROLS, ""), "", escape(control));
  assert.equal("שלום مرحبا \u200d\u2028".replace(BIDI_CONTROLS, ""), "שלום مرحبا \u200d\u2028");
  assert.equal(visibleBidi(`a${RLO}b\u2066c`), "a%E2%80%AEb%E2%81%A6c");
  const element = new FakeDocument().createElement("span");
  assert.equal(isolate(element), element);
  assert.equal(element.getAttribute("dir"), "auto");
});

test("markdown isolates its root, each block of text and each link", () => {
  const document = new FakeDocument();
  const root = renderMarkdown(document, `# T\n\n${RLO}para [a${RLO}b](https://x.example/)\n\n- item\n\n| h |\n| - |\n| c |`, { t });
  assert.equal(root.getAttribute("dir"), "auto");
  const isolated = descendants(root).filter((element) => element.getAttribute("dir") === "auto");
  assert.deepEqual(isolated.map((element) => element.localName), ["h1", "p", "a", "li", "th", "td"]);
  const link = root.querySelector("a");
  assert.equal(link.textContent, `a${RLO}b`, "a link's own text stays exact: it is isolated");
});

test("a bare URL's label shows its bidi controls as its href does; the text around it stays exact", () => {
  const document = new FakeDocument();
  const root = renderMarkdown(document, `see https://evil.example/${RLO}fdp.exe and <https://b.example/${RLO}x> ${RLO}ok`, { t });
  const [bare, angled] = root.querySelectorAll("a");
  assert.equal(bare.textContent, "https://evil.example/%E2%80%AEfdp.exe");
  assert.equal(bare.getAttribute("href"), "https://evil.example/%E2%80%AEfdp.exe");
  assert.equal(angled.textContent, "https://b.example/%E2%80%AEx");
  assert.equal(bare.getAttribute("dir"), "auto");
  assert.ok(root.textContent.endsWith(` ${RLO}ok`));
});

test("the person's bubble, the answer and the reasoning are isolated; their text stays exact", () => {
  const document = new FakeDocument();
  const ctx = { document, t, time, lang: "en", registry: null, onRenderError: () => {} };
  const [user, assistant] = toNodes([
    { seq: 0, type: "message/user", time: 0, data: { text: `${RLO}hi`, source: { kind: "user" } } },
    { seq: 1, type: "message/assistant", time: 1, data: { text: `${RLO}ok`, toolCalls: [], reasoning: `${RLO}hm` } },
  ]);
  const bubble = buildNode(user, ctx).querySelector(".bubble");
  assert.equal(bubble.getAttribute("dir"), "auto");
  assert.equal(bubble.textContent, `${RLO}hi`);
  const answer = buildNode(assistant, ctx);
  assert.equal(answer.querySelector("[data-role=answer]").getAttribute("dir"), "auto");
  assert.equal(answer.querySelector(".reasoning-text").getAttribute("dir"), "auto");
  assert.equal(answer.querySelector(".reasoning-text").textContent, `${RLO}hm`);
  assert.equal(reasoningBlock(document, t, { text: "x", ms: 1 }).querySelector(".reasoning-text").getAttribute("dir"), "auto");
});

test("titles are isolated in the list, its rename field and the header", () => {
  const document = new FakeDocument();
  const list = document.createElement("ul");
  const view = new SessionList({ document, list, onOpen() {}, onRename() {}, onDelete() {} });
  const sessions = [{ id: "s1", createdAt: 1, live: false, length: 1, lineage: null, title: `${RLO}evil` }];
  view.render({ sessions, currentId: "s1", t, time, now: 2 });
  const title = list.querySelector("[data-role=session-title]");
  assert.equal(title.getAttribute("dir"), "auto");
  assert.equal(title.textContent, `${RLO}evil`);
  view.startRename("s1");
  assert.equal(list.querySelector("[data-role=rename-input]").getAttribute("dir"), "auto");
  const header = createHeader({ document, labels: { attr() {} }, onMenu() {} });
  header.setTitle(`${RLO}evil`, "s1");
  assert.equal(header.element.querySelector("[data-role=title]").getAttribute("dir"), "auto");
});
