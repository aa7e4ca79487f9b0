// Tests for plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js.
// Run with `node --test tests/client/` (node 20, no dependencies).

import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";

import {
  EVENT_TYPE,
  register,
  renderScheduleReminder,
} from "../../plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";

// -- a minimal document: enough DOM to build and inspect a tree, and loud about HTML ------

class FakeNode {
  constructor(doc) {
    this.ownerDocument = doc;
    this.parentNode = null;
  }
}

class FakeText extends FakeNode {
  constructor(doc, data) {
    super(doc);
    this.nodeType = 3;
    this.data = String(data);
  }

  get textContent() {
    return this.data;
  }

  set textContent(value) {
    this.data = String(value);
  }
}

class FakeElement extends FakeNode {
  constructor(doc, tag, { withStyle = true } = {}) {
    super(doc);
    this.nodeType = 1;
    this.localName = String(tag).toLowerCase();
    this.tagName = this.localName.toUpperCase();
    this.attributes = new Map();
    this.childNodes = [];
    if (withStyle) this.style = {};
  }

  get children() {
    return this.childNodes.filter((node) => node.nodeType === 1);
  }

  setAttribute(name, value) {
    this.attributes.set(String(name).toLowerCase(), String(value));
  }

  getAttribute(name) {
    const key = String(name).toLowerCase();
    return this.attributes.has(key) ? this.attributes.get(key) : null;
  }

  hasAttribute(name) {
    return this.attributes.has(String(name).toLowerCase());
  }

  appendChild(node) {
    if (!(node instanceof FakeNode)) throw new TypeError("appendChild expects a node");
    this.childNodes.push(node);
    node.parentNode = this;
    return node;
  }

  get textContent() {
    return this.childNodes.map((node) => node.textContent).join("");
  }

  set textContent(value) {
    this.childNodes = [];
    const text = value == null ? "" : String(value);
    if (text !== "") this.appendChild(new FakeText(this.ownerDocument, text));
  }

  get innerHTML() {
    throw new Error("the renderer must not read innerHTML");
  }

  set innerHTML(_value) {
    throw new Error("the renderer must not write innerHTML");
  }

  insertAdjacentHTML() {
    throw new Error("the renderer must not insert HTML");
  }
}

class FakeDocument {
  constructor(options = {}) {
    this.options = options;
    this.createdTags = [];
  }

  createElement(tag) {
    const element = new FakeElement(this, tag, this.options);
    this.createdTags.push(element.localName);
    return element;
  }

  createTextNode(data) {
    return new FakeText(this, data);
  }
}

function* descendants(node) {
  for (const child of node.children ?? []) {
    yield child;
    yield* descendants(child);
  }
}

function byClass(root, name) {
  return [...descendants(root)].filter((node) =>
    (node.getAttribute("class") ?? "").split(" ").includes(name),
  );
}

function one(root, name) {
  const found = byClass(root, name);
  assert.equal(found.length, 1, `expected exactly one .${name}, found ${found.length}`);
  return found[0];
}

function classesOf(node) {
  return (node.getAttribute("class") ?? "").split(" ");
}

// node 20 has no `navigator`; later versions have a read-only one. Either way, restore it.
function withNavigator(t, navigator) {
  const previous = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: navigator, configurable: true });
  t.after(() => {
    if (previous) Object.defineProperty(globalThis, "navigator", previous);
    else delete globalThis.navigator;
  });
}

// -- fixtures ---------------------------------------------------------------------------

const VIEW = Object.freeze({
  scheduleId: "rem-1",
  prompt: "stretch",
  occurrenceAt: "2026-01-01T00:00:10.000Z",
  deliveryMode: "session-local",
});

const EVENT = Object.freeze({
  seq: 7,
  type: "schedule/change",
  time: 1767225610000,
  data: { version: 1, change: "dispatch", id: "rem-1" },
});

const XSS = "<img src=x onerror=alert(1)>";

function render(view, ctx = {}) {
  const document = new FakeDocument();
  const node = renderScheduleReminder(view, EVENT, { document, lang: "en", ...ctx });
  return { document, node };
}

// -- registration -----------------------------------------------------------------------

describe("register", () => {
  test("registers the reminder renderer for schedule/change views", () => {
    const calls = [];
    register({ register: (type, renderer) => calls.push([type, renderer]) });
    assert.equal(EVENT_TYPE, "schedule/change");
    assert.deepEqual(calls, [["schedule/change", renderScheduleReminder]]);
  });

  test("plugs into the browser client's event-view registry", () => {
    const registry = createRegistry({ lang: () => "zh" });
    register(registry.forPlugin("client-ui-schedule"));
    assert.equal(registry.ownerOf("schedule/change"), "client-ui-schedule");
    const render = registry.lookup("schedule/change");
    const document = new FakeDocument();
    const ctx = { document, lang: registry.lang(), t: (key) => key, seq: 7, eventType: EVENT_TYPE };
    const node = render(VIEW, EVENT, ctx);
    assert.equal(node.getAttribute("data-schedule-id"), "rem-1");
    assert.equal(one(node, "dsh-schedule-label").textContent, "提醒");
  });
});

// -- the reminder row -------------------------------------------------------------------

describe("reminder row", () => {
  test("is a stable hook carrying the schedule id", () => {
    const { node } = render(VIEW);
    assert.equal(node.getAttribute("data-role"), "schedule-reminder");
    assert.equal(node.getAttribute("data-schedule-id"), "rem-1");
    assert.ok(classesOf(node).includes("dsh-schedule-reminder"));
    assert.ok(!classesOf(node).includes("dsh-schedule-invalid"));
  });

  test("draws the bell, the English label, the prompt in bold, the id and the badge", () => {
    const { node } = render(VIEW, { lang: "en" });
    const bell = one(node, "dsh-schedule-bell");
    assert.equal(bell.textContent, "🔔");
    assert.equal(bell.getAttribute("aria-hidden"), "true");
    assert.equal(one(node, "dsh-schedule-label").textContent, "Reminder");
    const prompt = one(node, "dsh-schedule-prompt");
    assert.equal(prompt.localName, "strong");
    assert.equal(prompt.textContent, "stretch");
    assert.equal(one(node, "dsh-schedule-id").textContent, "rem-1");
    assert.equal(one(node, "dsh-schedule-badge").textContent, "session-local");
  });

  test("follows a Chinese UI language with Chinese labels", () => {
    const { node } = render(VIEW, { lang: "zh" });
    const label = one(node, "dsh-schedule-label");
    assert.equal(label.textContent, "提醒");
    assert.equal(label.getAttribute("lang"), "zh");
    const badge = one(node, "dsh-schedule-badge");
    assert.equal(badge.textContent, "仅限本会话");
    assert.equal(badge.getAttribute("lang"), "zh");
    assert.equal(one(node, "dsh-schedule-prompt").textContent, "stretch");
  });

  test("treats a regional Chinese tag as Chinese and anything unknown as English", () => {
    const label = (lang) => one(render(VIEW, { lang }).node, "dsh-schedule-label").textContent;
    assert.equal(label("zh-CN"), "提醒");
    assert.equal(label("fr"), "Reminder");
    assert.equal(label(42), "Reminder");
  });

  test("renders the same view again in the other language without carrying state", () => {
    const english = render(VIEW, { lang: "en" }).node;
    const chinese = render(VIEW, { lang: "zh" }).node;
    const english2 = render(VIEW, { lang: "en" }).node;
    assert.notEqual(english.textContent, chinese.textContent);
    assert.equal(english.textContent, english2.textContent);
  });

  test("lays the meta line out as time · id · badge", () => {
    const { node } = render(VIEW, { locale: "en-US", timeZone: "UTC" });
    const meta = one(node, "dsh-schedule-meta");
    const parts = meta.children.map((child) => classesOf(child)[0]);
    assert.deepEqual(parts, [
      "dsh-schedule-time",
      "dsh-schedule-separator",
      "dsh-schedule-id",
      "dsh-schedule-separator",
      "dsh-schedule-badge",
    ]);
    assert.match(meta.textContent, / · rem-1 · session-local$/);
  });

  test("styles the card from JS with dsh-schedule- classes only", () => {
    const { node } = render(VIEW);
    assert.equal(node.style.display, "flex");
    assert.match(node.style.borderRadius, /px$/);
    assert.equal(one(node, "dsh-schedule-prompt").style.fontWeight, "600");
    for (const element of [node, ...descendants(node)]) {
      for (const name of classesOf(element)) assert.match(name, /^dsh-schedule-/);
    }
  });

  test("still renders when elements have no style object", () => {
    const document = new FakeDocument({ withStyle: false });
    const node = renderScheduleReminder(VIEW, EVENT, { document, lang: "en" });
    assert.equal(node.style, undefined);
    assert.equal(one(node, "dsh-schedule-prompt").textContent, "stretch");
  });
});

// -- the occurrence time ----------------------------------------------------------------

describe("occurrence time", () => {
  test("is a time element whose datetime and title carry the UTC instant", () => {
    const { node } = render(VIEW);
    const time = one(node, "dsh-schedule-time");
    assert.equal(time.localName, "time");
    assert.equal(time.getAttribute("datetime"), "2026-01-01T00:00:10.000Z");
    assert.equal(time.getAttribute("title"), "UTC: 2026-01-01T00:00:10.000Z");
  });

  test("shows the instant in the reader's time zone", () => {
    const utc = one(render(VIEW, { locale: "en-US", timeZone: "UTC" }).node, "dsh-schedule-time");
    assert.match(utc.textContent, /Jan 1, 2026/);
    assert.match(utc.textContent, /12:00:10/);
    assert.match(utc.textContent, /UTC/);
    const tokyo = render(VIEW, { locale: "en-US", timeZone: "Asia/Tokyo" }).node;
    assert.match(one(tokyo, "dsh-schedule-time").textContent, /09:00:10/);
  });

  test("reads in Chinese when the UI is Chinese", () => {
    const { node } = render(VIEW, { lang: "zh", timeZone: "Asia/Shanghai" });
    const text = one(node, "dsh-schedule-time").textContent;
    assert.match(text, /2026年1月1日/);
    assert.match(text, /08:00:10/);
  });

  test("defaults to the reader's own locale and time zone", () => {
    const { node } = render(VIEW, { lang: "en" });
    const reader = new Intl.DateTimeFormat().resolvedOptions().locale;
    const locale = reader.toLowerCase().startsWith("en") ? reader : "en";
    const expected = new Intl.DateTimeFormat(locale, {
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      timeZoneName: "short",
    }).format(new Date(VIEW.occurrenceAt));
    assert.equal(one(node, "dsh-schedule-time").textContent, expected);
  });

  test("prefers the reader's regional variant of the UI language", (t) => {
    withNavigator(t, { languages: ["de-DE", "en-GB", "zh-TW"] });
    const english = render(VIEW, { lang: "en", timeZone: "UTC" }).node;
    assert.match(one(english, "dsh-schedule-time").textContent, /^1 Jan 2026/);
    const chinese = render(VIEW, { lang: "zh", timeZone: "UTC" }).node;
    const expected = new Intl.DateTimeFormat("zh-TW", {
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      timeZoneName: "short",
      timeZone: "UTC",
    }).format(new Date(VIEW.occurrenceAt));
    assert.equal(one(chinese, "dsh-schedule-time").textContent, expected);
  });

  test("ignores an empty locale and a navigator without languages", (t) => {
    withNavigator(t, {});
    const { node } = render(VIEW, { locale: "", lang: "zh", timeZone: "UTC" });
    assert.match(one(node, "dsh-schedule-time").textContent, /2026年1月1日/);
  });

  test("falls back to the ISO instant when the time zone is unknown", () => {
    const { node } = render(VIEW, { timeZone: "Not/AZone" });
    const time = one(node, "dsh-schedule-time");
    assert.equal(time.textContent, "2026-01-01T00:00:10.000Z");
    assert.equal(time.getAttribute("datetime"), "2026-01-01T00:00:10.000Z");
  });
});

// -- text, never HTML -------------------------------------------------------------------

describe("untrusted text", () => {
  test("a prompt that looks like HTML is rendered verbatim as text", () => {
    const { document, node } = render({ ...VIEW, prompt: XSS });
    assert.ok(!document.createdTags.includes("img"));
    const prompt = one(node, "dsh-schedule-prompt");
    assert.equal(prompt.textContent, XSS);
    assert.equal(prompt.children.length, 0);
    assert.ok(node.textContent.includes(XSS));
  });

  test("an id that looks like HTML is an attribute value and text, nothing more", () => {
    const id = '"><script>alert(1)</script>';
    const { document, node } = render({ ...VIEW, scheduleId: id });
    assert.ok(!document.createdTags.includes("script"));
    assert.equal(node.getAttribute("data-schedule-id"), id);
    assert.equal(one(node, "dsh-schedule-id").textContent, id);
  });

  test("a malformed view's raw JSON is text too", () => {
    const { document, node } = render({ prompt: XSS });
    assert.ok(!document.createdTags.includes("img"));
    assert.ok(one(node, "dsh-schedule-raw").textContent.includes(XSS));
  });

  test("only the renderer's own elements are ever created", () => {
    const { document } = render({ ...VIEW, prompt: XSS });
    const allowed = new Set(["div", "span", "strong", "time", "code", "pre"]);
    for (const tag of document.createdTags) assert.ok(allowed.has(tag), tag);
  });
});

// -- malformed views --------------------------------------------------------------------

describe("malformed views", () => {
  const cases = [
    ["null", null],
    ["undefined", undefined],
    ["a string", "rem-1"],
    ["an array", [VIEW]],
    ["an empty object", {}],
    ["a missing prompt", { ...VIEW, prompt: undefined }],
    ["a blank prompt", { ...VIEW, prompt: "   " }],
    ["a numeric id", { ...VIEW, scheduleId: 1 }],
    ["an empty id", { ...VIEW, scheduleId: "" }],
    ["a numeric time", { ...VIEW, occurrenceAt: 1767225610000 }],
    ["a time that is not ISO", { ...VIEW, occurrenceAt: "tomorrow" }],
    ["a time that is not canonical", { ...VIEW, occurrenceAt: "2026-01-01T00:00:10Z" }],
    ["an impossible date", { ...VIEW, occurrenceAt: "2026-02-30T00:00:00.000Z" }],
    ["another delivery mode", { ...VIEW, deliveryMode: "global" }],
    ["a missing delivery mode", { ...VIEW, deliveryMode: undefined }],
  ];

  for (const [name, view] of cases) {
    test(`${name} renders the fallback row instead of throwing`, () => {
      const { node } = render(view);
      assert.equal(node.getAttribute("data-role"), "schedule-reminder");
      assert.ok(classesOf(node).includes("dsh-schedule-invalid"));
      assert.ok(!node.hasAttribute("data-schedule-id"));
      assert.equal(byClass(node, "dsh-schedule-prompt").length, 0);
      assert.equal(one(node, "dsh-schedule-bell").textContent, "🔔");
      assert.equal(one(node, "dsh-schedule-label").textContent, "Reminder (unreadable)");
    });
  }

  test("the fallback shows the raw view as JSON", () => {
    const view = { scheduleId: 3, prompt: "stretch" };
    const raw = one(render(view).node, "dsh-schedule-raw");
    assert.equal(raw.localName, "pre");
    assert.deepEqual(JSON.parse(raw.textContent), view);
  });

  test("the fallback follows the UI language", () => {
    const { node } = render(null, { lang: "zh" });
    assert.equal(one(node, "dsh-schedule-label").textContent, "提醒（无法显示）");
    assert.equal(one(node, "dsh-schedule-raw").textContent, "null");
  });

  test("a view JSON cannot express is still shown as text", () => {
    assert.equal(one(render(undefined).node, "dsh-schedule-raw").textContent, "undefined");
    const circular = { scheduleId: "rem-1" };
    circular.self = circular;
    const raw = one(render(circular).node, "dsh-schedule-raw");
    assert.equal(raw.textContent, "[unserializable view]");
    const big = one(render({ prompt: 1n }).node, "dsh-schedule-raw");
    assert.equal(big.textContent, "[unserializable view]");
  });
});

// -- the document -----------------------------------------------------------------------

describe("document", () => {
  afterEach(() => {
    delete globalThis.document;
  });

  test("uses the global document when the context gives none", () => {
    globalThis.document = new FakeDocument();
    const node = renderScheduleReminder(VIEW, EVENT);
    assert.ok(node instanceof FakeElement);
    assert.equal(node.ownerDocument, globalThis.document);
    assert.equal(one(node, "dsh-schedule-label").textContent, "Reminder");
  });

  test("prefers the context's document over the global one", () => {
    globalThis.document = new FakeDocument();
    const document = new FakeDocument();
    const node = renderScheduleReminder(VIEW, EVENT, { document, lang: "zh" });
    assert.equal(node.ownerDocument, document);
    assert.deepEqual(globalThis.document.createdTags, []);
  });

  test("without any document it says so", () => {
    assert.throws(() => renderScheduleReminder(VIEW, EVENT, {}), {
      name: "TypeError",
      message: /no document/,
    });
  });

  test("a context document that cannot create elements is refused", () => {
    assert.throws(() => renderScheduleReminder(VIEW, EVENT, { document: {} }), {
      name: "TypeError",
      message: /no document/,
    });
  });
});
