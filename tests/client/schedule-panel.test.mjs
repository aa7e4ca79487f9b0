// Tests for the reminders panel and the reminder words and states of
// plugins/client-ui-schedule (schedule-panel.js, schedule-state.js,
// schedule-words.js). Run with `node --test tests/client/`.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ApiError } from "../../host/dsh/web/static/api.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";
import {
  PANEL_ID,
  SNOOZES,
  STATE_PLUGIN,
  actionError,
  countdown,
  describeAlert,
  describeStatus,
  isDue,
  readState,
  register,
  reminderPanel,
  shortWhen,
} from "../../plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js";
import { FakeDocument } from "./fake-dom.mjs";

const NOW = Date.parse("2026-03-02T12:00:00.000Z");
const XSS = "<img src=x onerror=alert(1)>";

function view(id, overrides = {}) {
  return {
    id,
    prompt: `prompt ${id}`,
    rule: { kind: "after", seconds: 600 },
    ruleText: "once, 600 seconds after it was set",
    timeZone: "UTC",
    nextAt: "2026-03-02T12:10:00.000Z",
    nextAtLocal: "2026-03-02T12:10:00+00:00",
    state: "scheduled",
    revision: 1,
    delivered: 0,
    until: null,
    count: null,
    misfire: "latest",
    deliveryMode: "session-local",
    ...overrides,
  };
}

function memory() {
  const data = new Map();
  return { data, get: (key) => data.get(key) ?? null, set: (key, value) => (value === null ? data.delete(key) : data.set(key, value)) };
}

/** A mounted panel with a host that records what it is asked and answers as told. */
function mount({ answers = [], storage = memory(), matches = undefined } = {}) {
  const document = new FakeDocument();
  const calls = [];
  const errors = [];
  const pending = [];
  const host = {
    document,
    storage,
    onError: (err) => errors.push(err),
    act: (plugin, action, args) => {
      calls.push([plugin, action, args]);
      const answer = answers.shift() ?? { ok: true };
      return new Promise((resolve, reject) => pending.push(() => (answer.ok ? resolve({}) : reject(answer.error))));
    },
    resume: () => {
      calls.push(["resume"]);
      const answer = answers.shift() ?? { ok: true };
      return answer.ok ? Promise.resolve({}) : Promise.reject(answer.error);
    },
  };
  if (matches !== undefined) host.matches = matches;
  const panel = reminderPanel.mount(host);
  document.body.appendChild(panel.element);
  const props = { sessionId: "s1", live: true, lang: "en", timeZone: "Europe/Berlin", locale: "en-GB", now: NOW, states: {} };
  const draw = (change = {}) => {
    Object.assign(props, change);
    panel.update({ ...props });
  };
  const $ = (selector) => panel.element.querySelector(selector);
  const $$ = (selector) => panel.element.querySelectorAll(selector);
  const settle = async () => {
    while (pending.length > 0) pending.shift()();
    for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
  };
  return { document, panel, calls, errors, draw, $, $$, settle, storage, props };
}

const state = (...reminders) => ({ [STATE_PLUGIN]: { reminders } });

describe("the reminders panel", () => {
  test("registers as the reminders panel, with the status and the alert, and still works on an older registry", () => {
    const registry = createRegistry();
    register(registry.forPlugin("client-ui-schedule"));
    assert.deepEqual(registry.panels().map((panel) => [panel.id, panel.owner]), [[PANEL_ID, "client-ui-schedule"]]);
    assert.equal(registry.statuses()[0].plugin, "tool-schedule");
    assert.equal(registry.alertFor("schedule/change"), describeAlert);
    const types = [];
    register({ register: (type) => types.push(type) });
    assert.deepEqual(types, ["schedule/change", "schedule/snooze", "schedule/notice"]);
  });

  test("is hidden while the Session has no reminder state, and says how to make one when it has none", () => {
    const { panel, draw, $ } = mount();
    assert.equal(panel.element.getAttribute("data-role"), "reminders");
    assert.ok(panel.element.hasAttribute("hidden"));
    draw({ states: { other: {} } });
    assert.ok(panel.element.hasAttribute("hidden"), "another plugin's state is not ours");
    draw({ states: state() });
    assert.equal(panel.element.hasAttribute("hidden"), false);
    assert.equal($("[data-role=reminders-empty]").hasAttribute("hidden"), false);
    assert.match($("[data-role=reminders-empty]").textContent, /remind me in 10 minutes to stretch/);
    assert.equal(panel.element.querySelectorAll("[data-reminder-id]").length, 0);
    draw({ lang: "zh" });
    assert.match($("[data-role=reminders-empty]").textContent, /10分钟后提醒我伸展一下/);
    assert.equal($("[data-role=reminders-fires]").textContent, "只在此对话打开时触发", "absent: closed conversations do not fire");
  });

  test("says what the running setup does with a closed conversation, and only offers to open it where that matters", () => {
    const { draw, $ } = mount();
    const due = view("rem-1", { nextAt: "2026-03-02T11:00:00.000Z" });
    draw({ live: false, states: { [STATE_PLUGIN]: { reminders: [due], firesWhenClosed: true } } });
    const fires = $("[data-role=reminders-fires]");
    assert.equal(fires.textContent, "Fires even when this conversation is closed");
    assert.equal(fires.getAttribute("data-fires-when-closed"), "true");
    assert.ok($("[data-role=reminders-waiting]").hasAttribute("hidden"), "the host wakes it: nothing waits, nothing to open");
    draw({ states: { [STATE_PLUGIN]: { reminders: [due], firesWhenClosed: false } } });
    assert.equal(fires.textContent, "Fires only while this conversation is open");
    assert.equal($("[data-role=reminders-waiting]").hasAttribute("hidden"), false);
    assert.ok($("[data-action=resume-session]"));
    draw({ lang: "zh", states: { [STATE_PLUGIN]: { reminders: [due], firesWhenClosed: true } } });
    assert.equal(fires.textContent, "即使此对话已关闭也会触发");
  });

  test("after Pause, Resume or Snooze the keyboard stays on the changed reminder, not the page", async () => {
    const { draw, $, settle, document } = mount();
    draw({ states: state(view("rem-1"), view("rem-2")) });
    $("[data-reminder-id=rem-1] [data-action=pause]").focus();
    $("[data-reminder-id=rem-1] [data-action=pause]").click();
    assert.equal(document.activeElement.closest("[data-reminder-id]")?.getAttribute("data-reminder-id"), "rem-1", "while busy");
    assert.equal(document.activeElement.hasAttribute("disabled"), false, "a disabled button cannot hold the keyboard: the row does");
    await settle();
    draw({ states: state(view("rem-1", { state: "paused", revision: 2 }), view("rem-2")) });
    assert.equal(document.activeElement, $("[data-reminder-id=rem-1] [data-action=pause]") ?? document.activeElement);
    const row = () => document.activeElement.closest("[data-reminder-id]")?.getAttribute("data-reminder-id");
    assert.equal(row(), "rem-1");
    $("[data-reminder-id=rem-1] [data-action=resume]").focus();
    $("[data-reminder-id=rem-1] [data-action=resume]").click();
    await settle();
    assert.equal(row(), "rem-1");
    assert.notEqual(document.activeElement, document.body);
    const hour = () => $("[data-reminder-id=rem-2] [data-action=snooze][data-seconds=\"3600\"]");
    hour().focus();
    hour().click();
    await settle();
    assert.equal(document.activeElement, hour(), "the same snooze button, drawn anew");
    // A click from elsewhere (a mouse on an unfocused page) does not pull the keyboard in.
    const outside = document.createElement("button");
    document.body.appendChild(outside);
    outside.focus();
    $("[data-reminder-id=rem-2] [data-action=pause]").click();
    await settle();
    assert.equal(document.activeElement, outside);
  });

  test("on a phone the panel starts folded to one line; unfolded there, it stays so", () => {
    const storage = memory();
    const phone = mount({ storage, matches: (query) => query === "(max-width: 600px)" });
    phone.draw({ states: state(view("rem-1")) });
    const toggle = phone.$("[data-action=toggle-reminders]");
    assert.equal(toggle.getAttribute("aria-expanded"), "false");
    assert.ok(phone.$(".panel-body").hasAttribute("hidden"));
    assert.equal(phone.$("[data-role=reminders-next]").textContent, "next in 10:00", "one line that still says what is next");
    toggle.click();
    assert.equal(storage.get("open"), "open");
    const again = mount({ storage, matches: () => true });
    again.draw({ states: state(view("rem-1")) });
    assert.equal(again.$("[data-action=toggle-reminders]").getAttribute("aria-expanded"), "true");
    const desktop = mount({ matches: () => false });
    desktop.draw({ states: state(view("rem-1")) });
    assert.equal(desktop.$("[data-action=toggle-reminders]").getAttribute("aria-expanded"), "true");
    const broken = mount({ matches: () => { throw new Error("no media queries"); } });
    broken.draw({ states: state(view("rem-1")) });
    assert.equal(broken.$("[data-action=toggle-reminders]").getAttribute("aria-expanded"), "true");
  });

  test("lists each active reminder with its prompt, rule, next time in the reader's zone and a countdown", () => {
    const { draw, $, $$ } = mount();
    draw({
      states: state(
        view("rem-1", { prompt: `stretch ${XSS}` }),
        view("rem-2", { rule: { kind: "cron", cron: "30 8 * * MON-FRI" }, timeZone: "Europe/Berlin", nextAt: "2026-03-03T07:30:00.000Z" }),
      ),
    });
    assert.deepEqual($$("[data-reminder-id]").map((item) => item.getAttribute("data-reminder-id")), ["rem-1", "rem-2"]);
    const first = $("[data-reminder-id=rem-1]");
    assert.equal(first.querySelector("[data-role=reminder-prompt]").textContent, `stretch ${XSS}`);
    assert.equal(first.querySelector("img"), null, "the prompt is text");
    assert.equal(first.querySelector("[data-role=reminder-prompt]").getAttribute("dir"), "auto", "isolated");
    assert.equal(first.querySelector("[data-role=reminder-rule]").textContent, "Once");
    const next = first.querySelector("[data-role=reminder-next]");
    assert.equal(next.localName, "time");
    assert.equal(next.getAttribute("datetime"), "2026-03-02T12:10:00.000Z");
    assert.equal(next.querySelector("[data-role=reminder-at]").textContent, "13:10", "Berlin is UTC+1 in March");
    assert.equal(next.querySelector("[data-role=reminder-countdown]").textContent, "in 10:00");
    assert.match(next.getAttribute("title"), /UTC 2026-03-02T12:10:00.000Z/);
    const second = $("[data-reminder-id=rem-2]");
    assert.equal(second.querySelector("[data-role=reminder-rule]").textContent, "Every weekday at 08:30");
    assert.equal(second.querySelector("[data-role=reminder-at]").textContent, "Tomorrow 08:30");
    assert.equal(second.querySelector("[data-role=reminder-countdown]").textContent, "in 19 h 30 min");
    assert.equal($("[data-role=reminders-count]").textContent, " · 2");
    assert.equal($("[data-role=reminders-next]").textContent, "next in 10:00");
    assert.ok($("[data-role=reminders-empty]").hasAttribute("hidden"));
  });

  test("the countdown ticks with the clock, in place, and turns due then overdue", () => {
    const { draw, $ } = mount();
    draw({ states: state(view("rem-1")) });
    const item = $("[data-reminder-id=rem-1]");
    const button = item.querySelector("[data-action=pause]");
    draw({ now: NOW + 1000 });
    assert.equal(item.querySelector("[data-role=reminder-countdown]").textContent, "in 9:59");
    assert.equal($("[data-reminder-id=rem-1]"), item, "the same element: focus and hover survive a tick");
    assert.equal(item.querySelector("[data-action=pause]"), button);
    draw({ now: NOW + 599_500 });
    assert.equal(item.querySelector("[data-role=reminder-countdown]").textContent, "in 0:01");
    assert.equal(item.getAttribute("data-state"), "scheduled");
    draw({ now: NOW + 600_000 });
    assert.equal(item.querySelector("[data-role=reminder-countdown]").textContent, "due now");
    assert.equal(item.getAttribute("data-state"), "due");
    draw({ now: NOW + 600_000 + 5 * 60_000 });
    assert.equal(item.querySelector("[data-role=reminder-countdown]").textContent, "overdue by 5 minutes");
    draw({ lang: "zh" });
    assert.equal($("[data-reminder-id=rem-1] [data-role=reminder-countdown]").textContent, "晚了 5 分钟");
  });

  test("snooze, pause and resume go through the actions API with the reminder's revision", async () => {
    const { draw, $, calls, settle } = mount();
    draw({ states: state(view("rem-1", { revision: 3 }), view("rem-2", { state: "paused" })) });
    assert.deepEqual(SNOOZES, [600, 3600]);
    const snoozes = $("[data-reminder-id=rem-1]").querySelectorAll("[data-action=snooze]");
    assert.deepEqual(snoozes.map((button) => [button.getAttribute("data-seconds"), button.textContent]), [
      ["600", "10 min"],
      ["3600", "1 h"],
    ]);
    snoozes[1].click();
    assert.deepEqual(calls.at(-1), ["tool-schedule", "snooze", { id: "rem-1", revision: 3, seconds: 3600 }]);
    const busy = $("[data-reminder-id=rem-1]");
    assert.equal(busy.getAttribute("aria-busy"), "true");
    assert.ok(busy.querySelectorAll("button").every((button) => button.hasAttribute("disabled")), "one action at a time");
    busy.querySelector("[data-action=pause]").click();
    assert.equal(calls.length, 1, "a disabled button does nothing");
    await settle();
    assert.equal($("[data-reminder-id=rem-1]").hasAttribute("aria-busy"), false);

    $("[data-reminder-id=rem-1] [data-action=pause]").click();
    assert.deepEqual(calls.at(-1), ["tool-schedule", "pause", { id: "rem-1", revision: 3 }]);
    await settle();
    const paused = $("[data-reminder-id=rem-2]");
    assert.equal(paused.querySelector("[data-role=reminder-paused]").textContent, "Paused");
    assert.equal(paused.querySelector("[data-action=snooze]"), null, "a paused reminder is resumed, not snoozed");
    assert.equal(paused.querySelector("[data-action=pause]"), null);
    assert.equal(paused.querySelector("[data-role=reminder-countdown]").textContent, "paused");
    assert.equal(paused.getAttribute("data-state"), "paused");
    paused.querySelector("[data-action=resume]").click();
    assert.deepEqual(calls.at(-1), ["tool-schedule", "resume", { id: "rem-2", revision: 1 }]);
    await settle();
  });

  test("delete asks once, inline; the reminder leaves the list at once and stays gone", async () => {
    const { draw, $, calls, settle, props } = mount();
    draw({ states: state(view("rem-1"), view("rem-2")) });
    $("[data-reminder-id=rem-1] [data-action=ask-delete]").click();
    assert.equal(calls.length, 0, "asking is not deleting");
    const confirm = $("[data-reminder-id=rem-1] [data-role=reminder-confirm]");
    assert.match(confirm.textContent, /Delete this reminder\? It cannot be undone/);
    confirm.querySelector("[data-action=cancel-delete]").click();
    assert.equal($("[data-reminder-id=rem-1] [data-role=reminder-confirm]"), null);
    $("[data-reminder-id=rem-1] [data-action=ask-delete]").click();
    $("[data-reminder-id=rem-1] [data-action=delete]").click();
    assert.deepEqual(calls, [["tool-schedule", "delete", { id: "rem-1", revision: 1 }]]);
    await settle();
    assert.equal($("[data-reminder-id=rem-1]"), null, "gone before the state says so");
    draw({ now: props.now + 1000 });
    assert.equal($("[data-reminder-id=rem-1]"), null);
    draw({ states: state(view("rem-2")) });
    assert.deepEqual(
      [...$("[data-role=reminder-list]").children].map((item) => item.getAttribute("data-reminder-id")),
      ["rem-2"],
    );
  });

  test("a refused action is said plainly, in the reader's language, on the reminder", async () => {
    const conflict = new ApiError(409, "schedule_conflict", 'revision 1 is not the current revision 2: {"id":"rem-1"}');
    const offline = new ApiError(0, "network", "Failed to fetch");
    const { draw, $, errors, settle } = mount({ answers: [{ ok: false, error: conflict }, { ok: false, error: offline }] });
    draw({ states: state(view("rem-1")) });
    $("[data-reminder-id=rem-1] [data-action=pause]").click();
    await settle();
    const problem = $("[data-reminder-id=rem-1] [data-role=reminder-error]");
    assert.equal(problem.getAttribute("role"), "alert");
    assert.match(problem.textContent, /changed meanwhile/);
    assert.deepEqual(errors, [conflict]);
    draw({ lang: "zh" });
    assert.match($("[data-reminder-id=rem-1] [data-role=reminder-error]").textContent, /刚被修改过/);
    draw({ lang: "en" });
    $("[data-reminder-id=rem-1] [data-action=snooze]").click();
    assert.equal($("[data-reminder-id=rem-1] [data-role=reminder-error]"), null, "a new try clears the old words");
    await settle();
    assert.match($("[data-reminder-id=rem-1] [data-role=reminder-error]").textContent, /did not answer/);
  });

  test("every refusal the actions API documents has words in both languages", () => {
    const cases = [
      [new ApiError(409, "schedule_not_found", "x"), /is gone/, /已经不在了/],
      [new ApiError(409, "schedule_paused", "x"), /is paused/, /已暂停/],
      [new ApiError(409, "schedule_not_paused", "x"), /not paused/, /没有暂停/],
      [new ApiError(409, "schedule_log_invalid", "x"), /reminder record is damaged/, /记录已损坏/],
      [new ApiError(404, "schedule_not_installed", "x"), /has no reminders/, /没有提醒功能/],
      [new ApiError(422, "invalid_rule", "past its until"), /not possible: past its until/, /无法这样做：past its until/],
      [new ApiError(503, "persistence_uncertain", "nothing was changed"), /did not confirm it: nothing was changed/, /没有确认/],
      [new ApiError(503, "persistence_unavailable", "no store"), /Nothing could be stored: no store/, /无法保存/],
      [new ApiError(500, "internal_error", "see the server log"), /Could not do that: see the server log/, /没能完成/],
      [new Error("boom"), /Could not do that: boom/, /没能完成：boom/],
    ];
    for (const [err, en, zh] of cases) {
      assert.match(actionError(err, "en"), en);
      assert.match(actionError(err, "zh-CN"), zh);
    }
  });

  test("a closed conversation's due reminders wait (where closed ones do not fire), and Deliver now opens it", async () => {
    const refused = new ApiError(503, "persistence_unavailable", "storage is down");
    const { draw, $, calls, settle } = mount({ answers: [{ ok: false, error: refused }] });
    draw({ live: false, states: state(view("rem-1", { nextAt: "2026-03-02T11:00:00.000Z" }), view("rem-2")) });
    const waiting = $("[data-role=reminders-waiting]");
    assert.equal(waiting.hasAttribute("hidden"), false);
    assert.match(waiting.textContent, /A reminder is due, but this conversation is closed: it fires as soon as the conversation is open again/);
    assert.equal($("[data-reminder-id=rem-1] [data-role=reminder-countdown]").textContent, "overdue by 1 hour");
    waiting.querySelector("[data-action=resume-session]").click();
    await settle();
    assert.deepEqual(calls, [["resume"]]);
    assert.match($("[data-role=reminders-error]").textContent, /Nothing could be stored: storage is down/);
    waiting.querySelector("[data-action=resume-session]").click();
    await settle();
    assert.equal($("[data-role=reminders-error]").hasAttribute("hidden"), true);
    draw({ live: true });
    assert.ok($("[data-role=reminders-waiting]").hasAttribute("hidden"), "a live Session delivers it itself");
    draw({ live: false, states: state(view("rem-2")) });
    assert.match($("[data-role=reminders-waiting]").textContent, /closed, so its reminders wait: they fire only while it is open/);
    assert.equal($("[data-action=resume-session]").textContent, "Open it now");
    assert.equal($("[data-role=reminders-waiting]").getAttribute("data-due"), "0");
    draw({ states: state(view("rem-2", { state: "paused" })) });
    assert.ok($("[data-role=reminders-waiting]").hasAttribute("hidden"), "nothing of it would fire anyway");
    draw({ states: state(view("rem-1", { nextAt: "2026-03-02T11:00:00.000Z" }), view("rem-2")) });
    draw({ live: false, lang: "zh", now: NOW + 700_000 });
    assert.match($("[data-role=reminders-waiting]").textContent, /有 2 个提醒已到时间/);
  });

  test("a rejected log freezes the panel and says why; unreadable views are counted", () => {
    const { draw, $ } = mount();
    draw({
      states: {
        [STATE_PLUGIN]: {
          reminders: [view("rem-1"), { id: "nope" }, view("rem-3", { nextAt: "soon" })],
          error: { code: "schedule_log_invalid", seq: 9, message: "event 9: dispatch of rem-2, which is not active" },
        },
      },
    });
    assert.match($("[data-role=reminders-error]").textContent, /stopped: its reminder record is damaged \(event 9: dispatch of rem-2/);
    assert.match($("[data-role=reminders-error]").textContent, /2 reminders could not be shown/);
    assert.equal($("[data-reminder-id=rem-1] [data-action=pause]"), null, "nothing can change");
    assert.ok($("[data-role=reminders-empty]").hasAttribute("hidden"));
  });

  test("a reminder with nothing ahead says so", () => {
    const { draw, $ } = mount();
    draw({ states: state(view("rem-1", { state: "paused", nextAt: null })) });
    assert.equal($("[data-reminder-id=rem-1] [data-role=reminder-next]"), null);
    assert.match($("[data-reminder-id=rem-1]").textContent, /nothing ahead/);
    assert.equal($("[data-role=reminders-next]").textContent, "");
  });

  test("the panel folds away and remembers it", () => {
    const storage = memory();
    const { draw, $ } = mount({ storage });
    draw({ states: state(view("rem-1")) });
    const toggle = $("[data-action=toggle-reminders]");
    assert.equal(toggle.getAttribute("aria-expanded"), "true");
    assert.equal(toggle.getAttribute("aria-controls"), $(".panel-body").getAttribute("id"));
    toggle.click();
    assert.equal(toggle.getAttribute("aria-expanded"), "false");
    assert.ok($(".panel-body").hasAttribute("hidden"));
    assert.equal($("[data-role=reminders-next]").textContent, "next in 10:00", "folded, it still says what is next");
    assert.equal(storage.get("open"), "closed");
    const again = mount({ storage });
    again.draw({ states: state(view("rem-1")) });
    assert.equal(again.$("[data-action=toggle-reminders]").getAttribute("aria-expanded"), "false");
    again.$("[data-action=toggle-reminders]").click();
    assert.equal(storage.get("open"), "open");
  });
});

describe("the reminder state", () => {
  test("is read leniently: what cannot be shown is counted, never guessed", () => {
    assert.deepEqual(readState(null), { reminders: [], unreadable: 0, error: null });
    const read = readState({ reminders: [view("rem-1", { revision: 0, delivered: -1, state: "overdue" }), 7], error: { message: "m" } });
    assert.equal(read.unreadable, 1);
    assert.deepEqual(read.error, { code: "schedule_log_invalid", message: "m" });
    const [reminder] = read.reminders;
    assert.deepEqual([reminder.revision, reminder.delivered, reminder.paused], [null, 0, false]);
    assert.equal(isDue(reminder, NOW), false);
    assert.equal(isDue(reminder, NOW + 600_000), true);
    assert.equal(isDue({ ...reminder, paused: true }, NOW + 600_000), false);
    assert.equal(isDue({ ...reminder, nextAt: null }, NOW), false);
  });

  test("the status: a cold Session with due reminders says how many wait; nothing else says anything", () => {
    const due = view("rem-1", { nextAt: "2026-03-02T11:00:00.000Z" });
    const full = { reminders: [due, view("rem-2", { nextAt: "2026-03-02T11:30:00.000Z" }), view("rem-3")] };
    assert.deepEqual(describeStatus(full, { kind: "state", live: false, now: NOW }), { text: "🔔 2 reminders waiting", tone: "waiting" });
    assert.deepEqual(describeStatus({ reminders: [due] }, { kind: "state", live: false, now: NOW, lang: "en" }), {
      text: "🔔 1 reminder waiting",
      tone: "waiting",
    });
    assert.equal(describeStatus(full, { kind: "state", live: false, lang: "zh", now: NOW }).text, "🔔 2 个提醒待送达");
    assert.equal(describeStatus(full, { kind: "state", live: true, now: NOW }), null, "a live Session delivers them");
    assert.equal(describeStatus({ reminders: [view("rem-3")] }, { kind: "state", live: false, now: NOW }), null);
    assert.deepEqual(describeStatus({ reminders: [], error: { code: "schedule_log_invalid" } }, { kind: "state", live: true }), {
      text: "⚠ reminders stopped",
      tone: "error",
    });
    // The list's compact summary.
    assert.equal(describeStatus({ reminders: 2, next: "2026-03-02T11:00:00.000Z" }, { kind: "summary", live: false, now: NOW }).text, "🔔 a reminder is waiting");
    assert.equal(describeStatus({ reminders: 2, due: 2 }, { kind: "summary", live: false, now: NOW }).text, "🔔 2 reminders waiting");
    assert.equal(describeStatus({ reminders: 2, next: "2026-03-02T13:00:00.000Z" }, { kind: "summary", live: false, now: NOW }), null);
    assert.equal(describeStatus({ reminders: 2, due: 1 }, { kind: "summary", live: true, now: NOW }), null);
    assert.equal(describeStatus(7, { kind: "summary", live: false }), null);
  });

  test("the alert names the prompt and says when, in the reader's zone", () => {
    const receipt = {
      scheduleId: "rem-1",
      prompt: "stretch",
      occurrenceAt: "2026-03-02T11:00:00.000Z",
      deliveredAt: "2026-03-02T11:05:00.000Z",
      rule: { kind: "after", seconds: 60 },
      deliveryMode: "session-local",
    };
    const alert = describeAlert(receipt, { lang: "en", timeZone: "Asia/Tokyo", locale: "en-GB" });
    assert.equal(alert.title, "🔔 Reminder: stretch");
    assert.match(alert.body, /^Due 2 Mar 2026, 20:00:00 GMT\+9 · overdue by 5 minutes · Once$/);
    const zh = describeAlert({ ...receipt, deliveredAt: receipt.occurrenceAt }, { lang: "zh", timeZone: "UTC", locale: "zh-CN" });
    assert.equal(zh.title, "🔔 提醒：stretch");
    assert.doesNotMatch(zh.body, /晚了/);
    assert.equal(describeAlert({ prompt: "" }), null);
    assert.equal(describeAlert({ prompt: "tea" }).body, "");
  });
});

describe("reminder words", () => {
  test("countdowns read in both languages at every scale", () => {
    const at = (seconds) => new Date(NOW + seconds * 1000).toISOString();
    assert.equal(countdown(at(59), NOW, "en"), "in 0:59");
    assert.equal(countdown(at(3599), NOW, "zh"), "59:59 后");
    assert.equal(countdown(at(3600), NOW, "en"), "in 1 h 00 min");
    assert.equal(countdown(at(3 * 3600 + 5 * 60), NOW, "zh"), "3 小时 05 分后");
    assert.equal(countdown(at(86_400), NOW, "en"), "in 1 day");
    assert.equal(countdown(at(3 * 86_400), NOW, "en"), "in 3 days");
    assert.equal(countdown(at(3 * 86_400), NOW, "zh"), "3 天后");
    assert.equal(countdown(at(0), NOW, "en"), "due now");
    assert.equal(countdown(at(-30), NOW, "zh"), "已到时间");
    assert.equal(countdown(at(-7200), NOW, "en"), "overdue by 2 hours");
    assert.equal(countdown("not a time", NOW, "en"), "");
  });

  test("short times are relative to the reader's day, in their zone", () => {
    const options = { timeZone: "America/New_York", locale: "en-GB" };
    assert.equal(shortWhen("2026-03-02T15:00:00.000Z", "en", options, NOW), "10:00");
    assert.equal(shortWhen("2026-03-03T15:00:00.000Z", "en", options, NOW), "Tomorrow 10:00");
    assert.equal(shortWhen("2026-03-01T15:00:00.000Z", "zh", { ...options, locale: "zh-CN" }, NOW), "昨天 10:00");
    assert.equal(shortWhen("2026-03-09T15:00:00.000Z", "en", options, NOW), "Mon 9 Mar 11:00", "New York moved to summer time");
    assert.equal(shortWhen("2026-03-02T15:00:00.000Z", "en", { timeZone: "Not/AZone" }, NOW), "2026-03-02T15:00:00.000Z");
  });
});
