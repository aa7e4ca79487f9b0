// Tests for plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js.
// Run with `node --test tests/client/` (node 20, no dependencies).

import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";

import {
  EVENT_TYPE,
  NOTICE_TYPE,
  MISSED_CAP,
  OVERDUE_AFTER_MS,
  register,
  renderScheduleNotice,
  renderScheduleReminder,
  ruleWords,
  spellSeconds,
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

  removeAttribute(name) {
    this.attributes.delete(String(name).toLowerCase());
  }

  // The card's buttons listen; this document never dispatches.
  addEventListener() {}

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
  test("registers the receipt, the snooze line and the notice renderers", () => {
    const calls = [];
    register({ register: (type, renderer) => calls.push([type, renderer]) });
    assert.equal(EVENT_TYPE, "schedule/change");
    assert.equal(NOTICE_TYPE, "schedule/notice");
    assert.deepEqual(calls.map(([type]) => type), ["schedule/change", "schedule/snooze", "schedule/notice"]);
    assert.equal(calls[2][1], renderScheduleNotice);
    // The receipt's renderer shares what happened to cards with the snooze line's (one page).
    const document = new FakeDocument();
    const card = calls[0][1](VIEW, EVENT, { document, lang: "en", seq: 7, sessionId: "s" });
    assert.equal(card.getAttribute("data-schedule-id"), "rem-1");
    calls[1][1]({ snooze: { id: "rem-5", prompt: "stretch", dispatchSeq: 7, nextAt: "2026-01-01T00:10:10.000Z" } }, { seq: 9, time: EVENT.time }, { document, lang: "en", sessionId: "s" });
    assert.equal(card.getAttribute("data-state"), "snoozed");
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

  test("draws the bell, the English label, the prompt in bold and the id; no jargon badge", () => {
    const { node } = render(VIEW, { lang: "en" });
    const bell = one(node, "dsh-schedule-bell");
    assert.equal(bell.textContent, "🔔");
    assert.equal(bell.getAttribute("aria-hidden"), "true");
    assert.equal(one(node, "dsh-schedule-label").textContent, "Reminder");
    const prompt = one(node, "dsh-schedule-prompt");
    assert.equal(prompt.localName, "strong");
    assert.equal(prompt.textContent, "stretch");
    assert.equal(one(node, "dsh-schedule-id").textContent, "rem-1");
    assert.doesNotMatch(node.textContent, /session-local/);
  });

  test("isolates the prompt, the person's or the model's text, so a U+202E in it reverses nothing else", () => {
    const { node } = render({ ...VIEW, prompt: "\u202eevil" });
    const prompt = one(node, "dsh-schedule-prompt");
    assert.equal(prompt.getAttribute("dir"), "auto");
    assert.equal(prompt.textContent, "\u202eevil", "the text itself stays exact");
    assert.equal(one(node, "dsh-schedule-label").getAttribute("dir"), null, "the plugin's own words are not");
  });

  test("follows a Chinese UI language with Chinese labels", () => {
    const { node } = render(VIEW, { lang: "zh" });
    const label = one(node, "dsh-schedule-label");
    assert.equal(label.textContent, "提醒");
    assert.equal(label.getAttribute("lang"), "zh");
    assert.doesNotMatch(node.textContent, /会话/);
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

  test("lays the meta line out as time · id, and what the setup does when the host says", () => {
    const { node } = render(VIEW, { locale: "en-US", timeZone: "UTC" });
    const meta = one(node, "dsh-schedule-meta");
    const parts = meta.children.map((child) => classesOf(child)[0]);
    assert.deepEqual(parts, ["dsh-schedule-time", "dsh-schedule-separator", "dsh-schedule-id"]);
    assert.match(meta.textContent, / · rem-1$/);
    const fires = (state, lang = "en") =>
      text(render(VIEW, { lang, pluginState: (plugin) => (plugin === "tool-schedule" ? state : undefined) }).node, "dsh-schedule-fires");
    assert.equal(fires({ reminders: [], firesWhenClosed: true }), "Fires even when this conversation is closed");
    assert.equal(fires({ reminders: [], firesWhenClosed: false }), "Fires only while this conversation is open");
    assert.equal(fires({ reminders: [] }), "Fires only while this conversation is open", "absent: false");
    assert.equal(fires({ reminders: [], firesWhenClosed: true }, "zh"), "即使此对话已关闭也会触发");
    assert.equal(fires(undefined), null, "no state known: says nothing");
    assert.equal(text(render(VIEW, { pluginState: () => { throw new Error("gone"); } }).node, "dsh-schedule-fires"), null);
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

// -- protocol v2 receipts: rule, lateness, missed ------------------------------------------

const V2 = Object.freeze({
  ...VIEW,
  occurrenceAt: "2026-03-30T07:00:00.000Z",
  deliveredAt: "2026-03-30T07:00:00.040Z",
  missed: 0,
  rule: { kind: "cron", cron: "0 9 * * MON-FRI" },
  ruleText: "at 09:00 on Monday through Friday (Europe/Berlin)",
  timeZone: "Europe/Berlin",
  revision: 1,
});

function text(node, name) {
  const found = byClass(node, name);
  return found.length === 0 ? null : found[0].textContent;
}

describe("protocol v2 receipt", () => {
  test("shows the rule in words, in the reminder's zone when it is not the reader's", () => {
    const berlin = render(V2, { timeZone: "Europe/Berlin" }).node;
    assert.equal(text(berlin, "dsh-schedule-rule"), "Every weekday at 09:00");
    const tokyo = render(V2, { timeZone: "Asia/Tokyo" }).node;
    assert.equal(text(tokyo, "dsh-schedule-rule"), "Every weekday at 09:00 (Europe/Berlin)");
    const chinese = render(V2, { lang: "zh", timeZone: "Europe/Berlin" }).node;
    assert.equal(text(chinese, "dsh-schedule-rule"), "每个工作日 09:00");
    assert.equal(one(chinese, "dsh-schedule-rule").getAttribute("data-role"), "reminder-rule");
  });

  test("shows the occurrence in the reader's zone", () => {
    const { node } = render(V2, { locale: "en-US", timeZone: "Asia/Tokyo" });
    assert.match(text(node, "dsh-schedule-time"), /Mar 30, 2026/);
    assert.match(text(node, "dsh-schedule-time"), /04:00:00/);
  });

  test("is on time without an overdue note, and says overdue by how much from a minute on", () => {
    assert.equal(text(render(V2).node, "dsh-schedule-overdue"), null);
    const under = Date.parse(V2.occurrenceAt) + OVERDUE_AFTER_MS - 1;
    const justUnder = { ...V2, deliveredAt: new Date(under).toISOString() };
    assert.equal(text(render(justUnder).node, "dsh-schedule-overdue"), null);
    const late = { ...V2, deliveredAt: "2026-03-30T09:05:30.000Z" };
    const english = render(late).node;
    assert.equal(text(english, "dsh-schedule-overdue"), "overdue by 2 hours 5 minutes");
    const overdue = one(english, "dsh-schedule-overdue");
    assert.equal(overdue.getAttribute("data-role"), "reminder-overdue");
    const chinese = render(late, { lang: "zh" }).node;
    assert.equal(text(chinese, "dsh-schedule-overdue"), "晚了 2 小时 5 分钟");
  });

  test("says how many missed occurrences it stands for", () => {
    const one_ = render({ ...V2, missed: 1 }).node;
    assert.equal(text(one_, "dsh-schedule-missed"), "stands for 1 missed occurrence");
    const many = render({ ...V2, missed: 3 }).node;
    assert.equal(text(many, "dsh-schedule-missed"), "stands for 3 missed occurrences");
    assert.equal(one(many, "dsh-schedule-missed").getAttribute("data-missed"), "3");
    const chinese = render({ ...V2, missed: 3 }, { lang: "zh" }).node;
    assert.equal(text(chinese, "dsh-schedule-missed"), "含错过的 3 次");
    assert.equal(text(render(V2).node, "dsh-schedule-missed"), null);
    // The plugin counts up to MISSED_CAP, which stands for that many or more.
    assert.equal(MISSED_CAP, 100_000);
    const capped = render({ ...V2, missed: MISSED_CAP }).node;
    assert.equal(text(capped, "dsh-schedule-missed"), "stands for 100000+ missed occurrences");
    const below = render({ ...V2, missed: MISSED_CAP - 1 }).node;
    assert.equal(text(below, "dsh-schedule-missed"), "stands for 99999 missed occurrences");
    const cappedZh = render({ ...V2, missed: MISSED_CAP }, { lang: "zh" }).node;
    assert.equal(text(cappedZh, "dsh-schedule-missed"), "含错过的 100000 次以上");
  });

  test("lays the meta line out as time · overdue · missed · rule · id", () => {
    const view = { ...V2, deliveredAt: "2026-03-30T08:00:00.000Z", missed: 2 };
    const meta = one(render(view, { timeZone: "Europe/Berlin" }).node, "dsh-schedule-meta");
    const parts = meta.children
      .map((child) => classesOf(child)[0])
      .filter((name) => name !== "dsh-schedule-separator");
    assert.deepEqual(parts, [
      "dsh-schedule-time",
      "dsh-schedule-overdue",
      "dsh-schedule-missed",
      "dsh-schedule-rule",
      "dsh-schedule-id",
    ]);
  });

  test("ignores optional fields it cannot read", () => {
    const odd = { ...V2, deliveredAt: "soon", missed: -2, rule: "daily", timeZone: 5, ruleText: 7 };
    const { node } = render(odd);
    assert.ok(!classesOf(node).includes("dsh-schedule-invalid"));
    for (const name of ["dsh-schedule-overdue", "dsh-schedule-missed", "dsh-schedule-rule"]) {
      assert.equal(text(node, name), null, name);
    }
  });
});

describe("rule words", () => {
  const words = (rule, lang = "en", extra = {}) =>
    ruleWords({ rule, ruleText: null, timeZone: "UTC", ...extra }, lang, { timeZone: "UTC" });

  test("one-shots read as once", () => {
    assert.equal(words({ kind: "after", seconds: 600 }), "Once");
    assert.equal(words({ kind: "at", at: "2026-01-02T09:00" }, "zh"), "一次");
  });

  test("intervals read in their units", () => {
    assert.equal(words({ kind: "every", seconds: 7200 }), "Every 2 hours");
    assert.equal(words({ kind: "every", seconds: 90 }), "Every 1 minute 30 seconds");
    assert.equal(words({ kind: "every", seconds: 86_400 }, "zh"), "每 1 天");
    assert.equal(words({ kind: "every", seconds: 0 }), null);
    assert.equal(words({ kind: "every", seconds: "60" }), null);
  });

  test("the usual cron shapes read as words in both languages", () => {
    const cases = [
      ["0 9 * * *", "Every day at 09:00", "每天 09:00"],
      ["30 8 * * 1-5", "Every weekday at 08:30", "每个工作日 08:30"],
      ["0 10 * * SAT,SUN", "Every weekend at 10:00", "每个周末 10:00"],
      ["0 10 * * 0,6", "Every weekend at 10:00", "每个周末 10:00"],
      ["15 7 * * MON,wed", "Every Monday, Wednesday at 07:15", "每周一、周三 07:15"],
      ["0 18 * * 7", "Every Sunday at 18:00", "每周日 18:00"],
      ["0 9 1 * *", "Monthly on day 1 at 09:00", "每月 1 日 09:00"],
      ["*/15 * * * *", "Every 15 minutes", "每 15 分钟"],
      ["*/1 * * * *", "Every 1 minute", "每 1 分钟"],
      ["5 */2 * * *", "Every 2 hours at minute 5", "每 2 小时（第 5 分）"],
      ["0 */1 * * *", "Every 1 hour at minute 0", "每 1 小时（第 0 分）"],
    ];
    for (const [cron, english, chinese] of cases) {
      assert.equal(words({ kind: "cron", cron }), english, cron);
      assert.equal(words({ kind: "cron", cron }, "zh"), chinese, cron);
    }
  });

  test("other cron shapes fall back to the host's words or the expression", () => {
    const unusual = [
      "0 9 * 1 *",
      "0 9 1 * MON",
      "0 9-17 * * *",
      "0 9 * * 5-1",
      "0 9 * * FUNDAY",
      "0 9 L * *",
      "1 2 3",
    ];
    for (const cron of unusual) {
      assert.equal(words({ kind: "cron", cron }), `On the cron schedule “${cron}”`, cron);
      assert.equal(words({ kind: "cron", cron }, "zh"), `按 cron 计划“${cron}”`, cron);
    }
    const host = { ruleText: "at 09:00 in January (Asia/Kolkata)", timeZone: "Asia/Kolkata" };
    const january = { kind: "cron", cron: "0 9 * 1 *" };
    assert.equal(words(january, "en", host), "At 09:00 in January (Asia/Kolkata)");
    assert.equal(words(january, "zh", host), "按 cron 计划“0 9 * 1 *” (Asia/Kolkata)");
  });

  test("no rule, an unknown kind or no zone say nothing more", () => {
    assert.equal(ruleWords({ rule: null }, "en"), null);
    assert.equal(words({ kind: "weekly" }), null);
    assert.equal(words({ kind: "cron", cron: 5 }), null);
    const daily = { kind: "cron", cron: "0 9 * * *" };
    assert.equal(words(daily, "en", { timeZone: null }), "Every day at 09:00");
  });

  test("the reader's own zone is the default to compare with", () => {
    const reader = new Intl.DateTimeFormat().resolvedOptions().timeZone;
    const here = ruleWords({ rule: { kind: "cron", cron: "0 9 * * *" }, timeZone: reader }, "en");
    assert.equal(here, "Every day at 09:00");
  });

  test("durations keep their two largest units", () => {
    assert.equal(spellSeconds(0, "en"), "0 seconds");
    assert.equal(spellSeconds(1, "en"), "1 second");
    assert.equal(spellSeconds(3 * 86_400 + 4 * 3600 + 5, "en"), "3 days 4 hours");
    assert.equal(spellSeconds(45, "zh"), "45 秒");
    assert.equal(spellSeconds(0, "zh"), "0 秒");
  });
});

// -- the notice of a rejected log --------------------------------------------------------

const NOTICE = Object.freeze({
  notice: "log_invalid",
  seq: 12,
  reason: "dispatch of rem-2, which is never created in this fold",
  deliveryMode: "session-local",
});

const DEFERRED = Object.freeze({
  notice: "deliveries_deferred",
  limit: "hour",
  max: 60,
  until: "2026-01-01T01:01:00.000Z",
  reason: "60 reminder turns in the last hour",
  deliveryMode: "session-local",
});

describe("notice", () => {
  function notice(view, ctx = {}) {
    const document = new FakeDocument();
    const event = { seq: 13, type: NOTICE_TYPE };
    return renderScheduleNotice(view, event, { document, lang: "en", ...ctx });
  }

  test("says that reminders stopped, where and why, in both languages", () => {
    const english = notice(NOTICE);
    assert.equal(english.getAttribute("data-role"), "schedule-notice");
    assert.equal(english.getAttribute("data-notice-seq"), "12");
    assert.equal(one(english, "dsh-schedule-label").textContent, "Reminders stopped");
    assert.equal(
      one(english, "dsh-schedule-meta").textContent,
      "The reminder record of this conversation is damaged at entry 12: dispatch of rem-2, which is " +
        "never created in this fold. Reminders set before it are still listed, but none of them " +
        "will fire.",
    );
    const chinese = notice(NOTICE, { lang: "zh" });
    assert.equal(one(chinese, "dsh-schedule-label").textContent, "提醒已停止");
    const body = one(chinese, "dsh-schedule-meta").textContent;
    assert.match(body, /^本对话的提醒记录在第 12 条处损坏/);
  });

  test("a reason that looks like HTML is text", () => {
    const document = new FakeDocument();
    const node = renderScheduleNotice({ ...NOTICE, reason: XSS }, {}, { document, lang: "en" });
    assert.ok(!document.createdTags.includes("img"));
    assert.ok(node.textContent.includes(XSS));
  });

  test("deferred reminders say why they wait and from when, in both languages", () => {
    const english = notice(DEFERRED, { timeZone: "UTC" });
    assert.equal(english.getAttribute("data-role"), "schedule-notice");
    assert.equal(english.getAttribute("data-notice-until"), "2026-01-01T01:01:00.000Z");
    assert.equal(english.getAttribute("data-notice-seq"), null);
    assert.equal(one(english, "dsh-schedule-label").textContent, "Reminders waiting");
    const body = one(english, "dsh-schedule-meta").textContent;
    assert.match(body, /^Reminders started 60 replies in the last hour, the most this conversation allows\./);
    assert.match(body, /none is lost\.$/);
    const daily = one(notice({ ...DEFERRED, limit: "day", max: 480 }), "dsh-schedule-meta");
    assert.match(daily.textContent, /480 replies in the last day/);
    const chinese = notice(DEFERRED, { lang: "zh", timeZone: "UTC" });
    assert.equal(one(chinese, "dsh-schedule-label").textContent, "提醒在等待");
    assert.match(one(chinese, "dsh-schedule-meta").textContent, /^过去一小时内提醒已触发 60 次回复/);
    assert.match(one(notice({ ...DEFERRED, limit: "day" }, { lang: "zh" }), "dsh-schedule-meta").textContent, /^过去一天/);
  });

  test("a malformed notice renders the fallback row", () => {
    const broken = [
      null,
      {},
      { ...NOTICE, notice: "other" },
      { ...NOTICE, seq: -1 },
      { ...NOTICE, seq: "12" },
      { ...NOTICE, reason: " " },
      { ...DEFERRED, limit: "week" },
      { ...DEFERRED, max: 0 },
      { ...DEFERRED, until: "tomorrow" },
      { ...DEFERRED, reason: "" },
    ];
    for (const view of broken) {
      const node = notice(view);
      assert.ok(classesOf(node).includes("dsh-schedule-invalid"), JSON.stringify(view));
    }
  });
});
