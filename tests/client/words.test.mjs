// Plain words (DESIGN §14.1): every person-facing string table of the host
// and of the reminders UI, walked in both languages, says none of the
// project's own words — "live", "cold", "events", "session-local" (nor
// 仅限本会话, 会话, 在线) — and a Session is a "conversation" (对话). And
// the panel says what the running setup really does with a closed
// conversation.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { STRINGS } from "../../host/dsh/web/static/i18n.js";
import {
  AFTER_WORDS,
  FIRES,
  LABELS,
  STATE_PLUGIN,
  STATUS,
  TOOL_ERRORS,
  WORDS,
  countdown,
  describeAlert,
  reminderPanel,
  ruleWords,
} from "../../plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js";
import { FakeDocument } from "./fake-dom.mjs";

const TABLES = {
  "host i18n.js STRINGS": STRINGS,
  "schedule-card.js LABELS": LABELS,
  "schedule-panel.js WORDS": WORDS,
  "schedule-state.js STATUS": STATUS,
  "schedule-after.js AFTER_WORDS": AFTER_WORDS,
  "schedule-words.js FIRES": FIRES,
  "schedule-words.js TOOL_ERRORS": TOOL_ERRORS,
};

/** Words the page must not say to a person, whatever the language. */
const BANNED = [
  /\blive\b/i,
  /\bcold\b/i,
  /\bevents\b/i,
  /\bsession-local\b/i,
  // A Session is a conversation to the person.
  /\bsessions?\b/i,
  /仅限本会话/,
  /会话/,
  /在线/,
];

/**
 * Every string of `value` with where it is: strings as they are, functions
 * called with sample arguments (counts and words), objects walked.
 */
function strings(value, path) {
  if (typeof value === "string") return [[path, value]];
  if (typeof value === "function") {
    return [1, 3].flatMap((n) => strings(value(n, "because"), `${path}(${n})`));
  }
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => strings(item, `${path}.${key}`));
  }
  return [];
}

/** What a person reads: code spans (`dsh sessions restore ID`) are commands to type, not words. */
function prose(text) {
  return text.replace(/`[^`]*`/g, "");
}

describe("plain words", () => {
  test("every table has both languages, with the same keys", () => {
    for (const [name, table] of Object.entries(TABLES)) {
      assert.deepEqual(Object.keys(table).sort(), ["en", "zh"], name);
      assert.deepEqual(Object.keys(table.zh).sort(), Object.keys(table.en).sort(), name);
    }
  });

  test("no table says live, cold, events, session-local or session (nor 仅限本会话, 会话, 在线)", () => {
    const found = [];
    let walked = 0;
    for (const [name, table] of Object.entries(TABLES)) {
      for (const [path, text] of strings(table, name)) {
        walked += 1;
        for (const word of BANNED) if (word.test(prose(text))) found.push(`${path}: ${JSON.stringify(text)} says ${word}`);
      }
    }
    assert.deepEqual(found, []);
    assert.ok(walked > 250, `${walked} strings walked`);
  });

  test("the words made on the fly (rules, countdowns, the alert) say none of them either", () => {
    const texts = [];
    for (const lang of ["en", "zh"]) {
      for (const rule of [{ kind: "after", seconds: 60 }, { kind: "every", seconds: 3600 }, { kind: "cron", cron: "0 9 * * 1-5" }, { kind: "cron", cron: "5 4 3 2 *" }]) {
        texts.push(ruleWords({ rule, ruleText: null, timeZone: "UTC" }, lang, { timeZone: "UTC" }));
      }
      for (const ahead of [-3_600_000, -30_000, 90_000, 7_200_000, 200_000_000]) texts.push(countdown("2026-03-02T12:00:00.000Z", Date.parse("2026-03-02T12:00:00.000Z") - ahead, lang));
      const alert = describeAlert({ prompt: "tea", occurrenceAt: "2026-03-02T12:00:00.000Z", deliveredAt: "2026-03-02T12:05:00.000Z", rule: { kind: "after", seconds: 60 } }, { lang, timeZone: "UTC" });
      texts.push(alert.title, alert.body);
    }
    for (const text of texts) for (const word of BANNED) assert.doesNotMatch(text, word, text);
  });
});

describe("what the setup does, said truly", () => {
  function panel(firesWhenClosed, lang) {
    const document = new FakeDocument();
    const mounted = reminderPanel.mount({ document, act: async () => ({}), resume: async () => ({}) });
    const due = { id: "rem-1", prompt: "tea", rule: { kind: "after", seconds: 60 }, nextAt: "2026-03-02T11:00:00.000Z", state: "scheduled", revision: 1 };
    const state = firesWhenClosed === undefined ? { reminders: [due] } : { reminders: [due], firesWhenClosed };
    mounted.update({ sessionId: "s", live: false, states: { [STATE_PLUGIN]: state }, lang, timeZone: "UTC", locale: null, now: Date.parse("2026-03-02T12:00:00.000Z") });
    const $ = (selector) => mounted.element.querySelector(selector);
    return {
      fires: $("[data-role=reminders-fires]").textContent,
      waits: !$("[data-role=reminders-waiting]").hasAttribute("hidden"),
      text: mounted.element.textContent,
    };
  }

  test("with the host waking closed conversations, the panel says they fire even when closed, and offers no Resume", () => {
    const en = panel(true, "en");
    assert.equal(en.fires, "Fires even when this conversation is closed");
    assert.equal(en.waits, false, "no “waits” note, no Resume: the host opens it when it is due");
    const zh = panel(true, "zh");
    assert.equal(zh.fires, "即使此对话已关闭也会触发");
    assert.equal(zh.waits, false);
  });

  test("under the design note's setup (or when the host does not say), they fire only while open, and a closed one waits", () => {
    for (const fires of [false, undefined]) {
      const en = panel(fires, "en");
      assert.equal(en.fires, "Fires only while this conversation is open");
      assert.equal(en.waits, true);
      assert.match(en.text, /this conversation is closed/);
      const zh = panel(fires, "zh");
      assert.equal(zh.fires, "只在此对话打开时触发");
      assert.equal(zh.waits, true);
    }
  });

  test("the two sentences differ in both languages, and each says the true thing", () => {
    for (const lang of ["en", "zh"]) assert.notEqual(FIRES[lang].whenClosed, FIRES[lang].whileOpen);
    assert.match(FIRES.en.whenClosed, /\beven when\b.*\bclosed\b/);
    assert.match(FIRES.en.whileOpen, /\bonly while\b.*\bopen\b/);
    assert.match(FIRES.zh.whenClosed, /已关闭.*也会触发/);
    assert.match(FIRES.zh.whileOpen, /只在.*打开时触发/);
  });
});
