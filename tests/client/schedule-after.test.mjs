// After a reminder fires (schedule-after.js): the card's Snooze and Done
// through the renderer ctx the host gives (act, markRead), what the card
// says afterwards, the `schedule/snooze` line and the card it names, and an
// older host's card without buttons.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  AFTER_WORDS,
  FiredCards,
  readSnooze,
  renderScheduleReminder,
  renderScheduleSnooze,
} from "../../plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js";
import { FakeDocument } from "./fake-dom.mjs";

const VIEW = Object.freeze({
  scheduleId: "rem-1",
  prompt: "stretch",
  occurrenceAt: "2026-03-02T09:00:00.000Z",
  deliveredAt: "2026-03-02T09:00:00.010Z",
  deliveryMode: "session-local",
});
const EVENT = Object.freeze({ seq: 12, type: "schedule/change", time: Date.parse("2026-03-02T09:00:00.010Z"), data: {} });
const SNOOZED = { id: "rem-5", prompt: "stretch", nextAt: "2026-03-02T09:10:00.000Z", timeZone: "Europe/Berlin" };

/** Settle the promise chains an action starts. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function host({ act = async () => ({ reminder: SNOOZED, snoozedFrom: { id: "rem-1", dispatchSeq: 12 } }), markRead = async () => ({ unread: 0 }) } = {}) {
  const calls = [];
  const errors = [];
  return {
    calls,
    errors,
    ctx: {
      sessionId: "s",
      seq: 12,
      timeZone: "Europe/Berlin",
      locale: "en-GB",
      act: async (...args) => {
        calls.push(["act", ...args]);
        return act(...args);
      },
      markRead: async (through) => {
        calls.push(["read", through]);
        return markRead(through);
      },
      onError: (err) => errors.push(err.message),
    },
  };
}

function card(ctx, { lang = "en", fired = new FiredCards(), view = VIEW, document = new FakeDocument() } = {}) {
  const node = renderScheduleReminder(view, EVENT, { document, lang, ...ctx }, fired);
  document.body.appendChild(node);
  const $ = (selector) => node.querySelector(selector);
  return { document, node, fired, $ };
}

describe("a delivered reminder's card", () => {
  test("offers Snooze 10 min, Snooze 1 h and Done as keyboard buttons with clear labels, in both languages", () => {
    const { ctx } = host();
    const { $, node } = card(ctx);
    const ten = $("[data-action=snooze][data-seconds=600]");
    const hour = $("[data-action=snooze][data-seconds=3600]");
    const done = $("[data-action=done]");
    for (const button of [ten, hour, done]) {
      assert.equal(button.localName, "button");
      assert.equal(button.getAttribute("type"), "button");
      assert.equal(button.hasAttribute("tabindex"), false, "a tab stop");
    }
    assert.equal(ten.textContent, "Snooze 10 min");
    assert.equal(hour.textContent, "Snooze 1 h");
    assert.equal(done.textContent, "Done");
    assert.equal(ten.getAttribute("aria-label"), "Remind me again in 10 minutes");
    assert.equal(node.getAttribute("data-state"), "delivered");
    assert.equal($("[data-role=reminder-outcome]").hasAttribute("hidden"), true);
    const zh = card(ctx, { lang: "zh" });
    assert.equal(zh.$("[data-action=snooze][data-seconds=600]").textContent, "推迟 10 分钟");
    assert.equal(zh.$("[data-action=snooze][data-seconds=3600]").textContent, "推迟 1 小时");
    assert.equal(zh.$("[data-action=done]").textContent, "完成");
  });

  test("Snooze asks for a new reminder linked to this occurrence, says until when, then reads the alert", async () => {
    const { ctx, calls } = host();
    const { $, node, document } = card(ctx);
    $("[data-action=snooze][data-seconds=600]").focus();
    $("[data-action=snooze][data-seconds=600]").click();
    assert.equal($("[data-action=done]").hasAttribute("disabled"), true, "one action at a time");
    await settle();
    assert.deepEqual(calls, [
      ["act", "tool-schedule", "snooze", { dispatchSeq: 12, seconds: 600 }],
      ["read", 12],
    ]);
    assert.equal(node.getAttribute("data-state"), "snoozed");
    const outcome = $("[data-role=reminder-outcome]");
    assert.equal(outcome.textContent, "Snoozed — again at 10:10", "in the reader's zone");
    assert.equal(outcome.getAttribute("role"), "status");
    assert.ok(["600", "3600"].every((s) => $(`[data-action=snooze][data-seconds="${s}"]`).hasAttribute("hidden")));
    assert.equal(document.activeElement, outcome, "the keyboard is not dropped on the page");
  });

  test("Done reads the alert through the card's seq and shows the card as done", async () => {
    const { ctx, calls } = host();
    const { $, node } = card(ctx, { lang: "zh" });
    $("[data-action=done]").click();
    await settle();
    assert.deepEqual(calls, [["read", 12]]);
    assert.equal(node.getAttribute("data-state"), "done");
    assert.equal($("[data-role=reminder-outcome]").textContent, "已完成 ✓");
    assert.ok($("[data-action=done]").hasAttribute("hidden"));
  });

  test("a refusal is said in words on the card, the host hears it, and the buttons work again", async () => {
    let fail = true;
    const { ctx, calls, errors } = host({
      act: async () => {
        if (fail) throw Object.assign(new Error("no such dispatch"), { status: 404, code: "schedule_not_found" });
        return { reminder: SNOOZED };
      },
      markRead: async () => {
        throw Object.assign(new Error("Failed to fetch"), { status: 0, code: "network" });
      },
    });
    const { $, node } = card(ctx);
    $("[data-action=snooze][data-seconds=3600]").click();
    await settle();
    const outcome = $("[data-role=reminder-outcome]");
    assert.match(outcome.textContent, /is gone/);
    assert.equal(outcome.getAttribute("role"), "alert");
    assert.equal(node.getAttribute("data-state"), "delivered");
    assert.equal($("[data-action=done]").hasAttribute("disabled"), false);
    $("[data-action=done]").click();
    await settle();
    assert.match(outcome.textContent, /did not answer/);
    assert.deepEqual(errors, ["no such dispatch", "Failed to fetch"]);
    fail = false;
    $("[data-action=snooze][data-seconds=3600]").click();
    await settle();
    assert.equal(node.getAttribute("data-state"), "snoozed", "the read after it may fail: the snooze stands");
    assert.equal(calls.filter(([kind]) => kind === "act").length, 2);
  });

  test("an older host (no act or markRead) gets the card without buttons", () => {
    const { $, node } = card({ seq: 12 });
    assert.equal($("[data-action=snooze]"), null);
    assert.equal($("[data-action=done]"), null);
    assert.ok($("[data-role=reminder-after]").hasAttribute("hidden"));
    assert.equal(node.getAttribute("data-schedule-id"), "rem-1");
  });

  test("a card whose receipt says it was snoozed shows so, without buttons", () => {
    const { ctx } = host();
    const { $, node } = card(ctx, { view: { ...VIEW, snoozedAs: "rem-5" } });
    assert.equal(node.getAttribute("data-state"), "snoozed");
    assert.equal($("[data-role=reminder-outcome]").textContent, "Snoozed");
    assert.ok($("[data-action=done]").hasAttribute("hidden"));
  });

  test("what happened outlives the element: drawn again (another language) it still says so", async () => {
    const { ctx } = host();
    const fired = new FiredCards();
    const first = card(ctx, { fired });
    first.$("[data-action=done]").click();
    await settle();
    const again = card(ctx, { fired, lang: "zh" });
    assert.equal(again.node.getAttribute("data-state"), "done");
    assert.equal(again.$("[data-role=reminder-outcome]").textContent, "已完成 ✓");
    const other = card({ ...ctx, sessionId: "t" }, { fired });
    assert.equal(other.node.getAttribute("data-state"), "delivered", "seq 12 of another Session is another card");
  });
});

describe("the snooze line", () => {
  const line = (view, ctx = {}, fired = new FiredCards()) =>
    renderScheduleSnooze(view, { seq: 20, type: "schedule/snooze", time: EVENT.time + 5000 }, { document: new FakeDocument(), lang: "en", timeZone: "Europe/Berlin", locale: "en-GB", sessionId: "s", ...ctx }, fired);
  const view = { snooze: { ...SNOOZED, dispatchSeq: 12, fromId: "rem-1", nextAtLocal: "2026-03-02T10:10:00+01:00" } };

  test("says what was snoozed and when it comes again, in both languages", () => {
    const english = line(view);
    assert.equal(english.getAttribute("data-role"), "schedule-snooze");
    assert.equal(english.getAttribute("data-dispatch-seq"), "12");
    assert.equal(english.textContent, "⏰Snoozed “stretch” — again at 10:10");
    assert.equal(english.querySelector("time").getAttribute("datetime"), SNOOZED.nextAt);
    assert.equal(line(view, { lang: "zh" }).textContent, "⏰已推迟 “stretch” — 10:10 再提醒");
    const tomorrow = line({ snooze: { ...view.snooze, nextAt: "2026-03-03T08:00:00.000Z" } });
    assert.match(tomorrow.textContent, /again Tomorrow 09:00$/);
  });

  test("marks the card it names as snoozed, in place", () => {
    const { ctx } = host();
    const fired = new FiredCards();
    const { node, $ } = card(ctx, { fired });
    line(view, {}, fired);
    assert.equal(node.getAttribute("data-state"), "snoozed");
    assert.equal($("[data-role=reminder-outcome]").textContent, "Snoozed — again at 10:10");
    line({ snooze: { ...view.snooze, dispatchSeq: 99 } }, {}, fired);
    assert.equal($("[data-role=reminder-outcome]").textContent, "Snoozed — again at 10:10", "another card's line");
  });

  test("a view it cannot read is a plain line, and names no card", () => {
    for (const bad of [null, {}, { snooze: { id: "", dispatchSeq: 1 } }, { snooze: { id: "rem-5", dispatchSeq: -1 } }]) {
      assert.equal(readSnooze(bad), null);
      const row = line(bad);
      assert.equal(row.textContent, "⏰Snoozed reminder (unreadable)");
      assert.equal(row.getAttribute("data-dispatch-seq"), null);
    }
    const prompt = "<img src=x onerror=alert(1)>";
    const document = new FakeDocument();
    const row = renderScheduleSnooze({ snooze: { ...view.snooze, prompt } }, {}, { document, lang: "en" });
    assert.ok(!document.created.includes("img"));
    assert.ok(row.textContent.includes(prompt));
    assert.equal(row.querySelector(".dsh-schedule-prompt").getAttribute("dir"), "auto", "the prompt is isolated");
  });

  test("its words are in both languages", () => {
    assert.deepEqual(Object.keys(AFTER_WORDS.en).sort(), Object.keys(AFTER_WORDS.zh).sort());
  });
});
