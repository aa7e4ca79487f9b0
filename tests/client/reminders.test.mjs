// A person is reminded: the assembled client (shell.js over api.js) with the
// real dsh-client-ui-schedule module, against a fake dsh web host — the panel
// from the Session's plugin state and state frames, its actions, one card
// per delivered reminder, being told while away (the host-wide stream: every
// Session's alerts and unread counts), the list's "1 reminder waiting", and
// the open/closed badge following live frames.

import assert from "node:assert/strict";
import { test } from "node:test";

import { createApi } from "../../host/dsh/web/static/api.js";
import { mountApp } from "../../host/dsh/web/static/shell.js";
import { FakeDocument } from "./fake-dom.mjs";
import { FakeHttpHost, FakeTimers, httpFailure, pump } from "./fake-server.mjs";

const MODULE = new URL("../../plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js", import.meta.url);
const UI = { plugin: "client-ui-schedule", url: "/plugins/client-ui-schedule/schedule-reminder.js", eventTypes: ["schedule/change"] };
const T0 = Date.parse("2026-03-02T12:00:00.000Z");

const user = (text) => ["message/user", { text, source: { kind: "user" } }];
const reminder = (id, overrides = {}) => ({
  id,
  prompt: `prompt ${id}`,
  rule: { kind: "after", seconds: 600 },
  ruleText: "once, 600 seconds after it was set",
  timeZone: "UTC",
  nextAt: "2026-03-02T12:10:00.000Z",
  state: "scheduled",
  revision: 1,
  delivered: 0,
  deliveryMode: "session-local",
  ...overrides,
});
const schedule = (...reminders) => ({ "tool-schedule": { reminders } });

/** A clock the test moves, and the page's once-a-second tick on it. */
class Clock {
  now = T0;
  ticks = new Set();

  tick = (fn) => {
    this.ticks.add(fn);
    return () => this.ticks.delete(fn);
  };

  advance(ms) {
    this.now += ms;
    for (const fn of [...this.ticks]) fn();
  }
}

class FakeNotification {
  static permission = "default";
  static shown = [];
  static asked = 0;

  static async requestPermission() {
    FakeNotification.asked += 1;
    FakeNotification.permission = "granted";
    return "granted";
  }

  constructor(title, options) {
    FakeNotification.shown.push({ title, ...options, note: this });
    this.closed = false;
  }

  close() {
    this.closed = true;
  }
}

function memoryStorage() {
  const data = new Map();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, String(v)), removeItem: (k) => data.delete(k) };
}

async function mount({ host = new FakeHttpHost({ modules: [UI] }), initialSession = null, storage = memoryStorage(), lang = "en-GB" } = {}) {
  FakeNotification.permission = "default";
  FakeNotification.shown = [];
  FakeNotification.asked = 0;
  const document = new FakeDocument();
  document.hasFocus = () => true;
  document.hidden = false;
  const root = document.createElement("div");
  document.body.appendChild(root);
  const timers = new FakeTimers();
  const clock = new Clock();
  const errors = [];
  const beeps = [];
  const focused = [];
  const audio = {
    currentTime: 0,
    destination: {},
    resume: () => {},
    createOscillator: () => ({ frequency: {}, connect() {}, start: (at) => beeps.push(at), stop() {} }),
    createGain: () => ({ gain: { setValueAtTime() {}, exponentialRampToValueAtTime() {} }, connect() {} }),
  };
  const controller = mountApp({
    document,
    root,
    api: createApi({ token: "t", fetch: host.fetch }),
    openLive: host.openLive,
    openEverywhere: host.openEverywhere,
    storage,
    navigatorLanguages: [lang],
    importModule: async (url) => {
      if (url === UI.url) return import(MODULE);
      throw new Error(`no module ${url}`);
    },
    timers,
    schedule: (fn) => fn(),
    initialSession,
    onError: (err) => errors.push(err),
    timeZone: "Europe/Berlin",
    now: () => clock.now,
    tick: clock.tick,
    Notification: FakeNotification,
    createAudio: () => audio,
    focusWindow: () => focused.push(true),
  });
  await controller.start();
  await pump(host, timers);
  const $ = (selector) => root.querySelector(selector);
  const $$ = (selector) => root.querySelectorAll(selector);
  return { document, root, controller, host, timers, clock, errors, beeps, focused, storage, $, $$ };
}

test("the panel shows the open Session's reminders from its state and follows state frames", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  const server = host.addSession("s", { events: [user("remind me")] });
  host.plugins.set("s", schedule(reminder("rem-1")));
  const app = await mount({ host, initialSession: "s" });
  const panel = app.$("[data-role=panels] [data-role=reminders]");
  assert.ok(panel, "the plugin's panel is in the page");
  assert.equal(panel.hasAttribute("hidden"), false);
  assert.equal(app.$("[data-role=panels]").hasAttribute("hidden"), false);
  const item = app.$("[data-reminder-id=rem-1]");
  assert.equal(item.querySelector("[data-role=reminder-at]").textContent, "13:10", "in the reader's zone");
  assert.equal(item.querySelector("[data-role=reminder-countdown]").textContent, "in 10:00");

  app.clock.advance(61_000);
  assert.equal(item.querySelector("[data-role=reminder-countdown]").textContent, "in 8:59", "a live countdown");

  // The model (or another tab) adds one: a state frame, and the panel follows.
  server.signal({ kind: "state", plugin: "tool-schedule", state: schedule(reminder("rem-1"), reminder("rem-2"))["tool-schedule"] });
  await pump(host, app.timers);
  assert.deepEqual(app.$$("[data-reminder-id]").map((el) => el.getAttribute("data-reminder-id")), ["rem-1", "rem-2"]);

  // Another language, same panel.
  app.$("[data-lang=zh]").click();
  assert.equal(app.$("[data-reminder-id=rem-1] [data-role=reminder-countdown]").textContent, "8:59 后");
  assert.equal(app.errors.length, 0, app.errors.join("\n"));
});

test("panel actions reach the actions API; the state read back updates the panel; refusals are words", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  host.addSession("s");
  host.plugins.set("s", schedule(reminder("rem-1"), reminder("rem-2", { revision: 2 })));
  const actions = [];
  host.onAction = (id, body) => {
    actions.push([id, body]);
    if (body.args.id === "rem-2") throw httpFailure(409, "schedule_not_found", "rem-2 is finished");
    host.plugins.set("s", schedule(reminder("rem-2", { revision: 2 })));
    return { id: body.args.id, deleted: true };
  };
  const app = await mount({ host, initialSession: "s" });
  app.$("[data-reminder-id=rem-1] [data-action=ask-delete]").click();
  app.$("[data-reminder-id=rem-1] [data-action=delete]").click();
  await pump(host, app.timers);
  assert.deepEqual(actions, [["s", { plugin: "tool-schedule", action: "delete", args: { id: "rem-1", revision: 1 } }]]);
  assert.equal(app.$("[data-reminder-id=rem-1]"), null);
  assert.ok(app.$("[data-reminder-id=rem-2]"));

  app.$("[data-reminder-id=rem-2] [data-action=snooze]").click();
  await pump(host, app.timers);
  assert.deepEqual(actions[1][1], { plugin: "tool-schedule", action: "snooze", args: { id: "rem-2", revision: 2, seconds: 600 } });
  assert.match(app.$("[data-reminder-id=rem-2] [data-role=reminder-error]").textContent, /is gone: it fired, finished or was deleted/);
});

test("a delivered reminder is one card holding its follow-up; told once while the reader is away", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  const server = host.addSession("s", { events: [user("remind me in 10 minutes to stretch")] });
  host.plugins.set("s", schedule(reminder("rem-1", { prompt: "stretch" })));
  const app = await mount({ host, initialSession: "s" });
  // Not a prompt on load: only the reader's click asks.
  assert.equal(FakeNotification.asked, 0);
  const notify = app.$("[data-role=notify]");
  assert.match(notify.textContent, /Notify me/);
  notify.click();
  await pump(host, app.timers);
  assert.equal(FakeNotification.asked, 1);
  assert.equal(notify.getAttribute("data-state"), "on");
  assert.equal(app.storage.data.get("dsh.notify"), "on");
  app.$("[data-role=sound]").click();
  assert.equal(app.storage.data.get("dsh.sound"), "on");
  const beeped = app.beeps.length;
  assert.ok(beeped > 0, "switching the sound on plays it once");

  // The reader looks away; the reminder fires.
  app.document.hasFocus = () => false;
  const dispatch = { version: 2, change: "dispatch", id: "rem-1", occurrenceAt: "2026-03-02T12:10:00.000Z", missed: 0, recordSeq: 0 };
  const dispatched = server.append("schedule/change", dispatch);
  const view = {
    scheduleId: "rem-1",
    prompt: "stretch",
    occurrenceAt: "2026-03-02T12:10:00.000Z",
    deliveredAt: "2026-03-02T12:10:00.004Z",
    missed: 0,
    rule: { kind: "after", seconds: 600 },
    ruleText: "once",
    timeZone: "UTC",
    revision: 1,
    deliveryMode: "session-local",
  };
  server.signal({ kind: "event", event: dispatched, sidecar: { for: "event", view } });
  server.append("message/user", {
    text: '[Scheduled reminder]\nPrompt: "stretch"',
    source: { kind: "schedule", scheduleId: "rem-1", occurrenceAt: view.occurrenceAt, missed: 0, dispatchSeq: dispatched.seq },
  });
  server.signal({ kind: "state", plugin: "tool-schedule", state: { reminders: [] } });
  // The host finds the alert at the commit point and tells every page.
  host.alert("s", dispatched.seq, { title: "stretch", body: "Due at 12:10 (UTC)", tag: "s/rem-1@2026-03-02T12:10:00.000Z" });
  await pump(host, app.timers, { take: false });

  const card = app.$(`[data-seq="${dispatched.seq}"][data-view]`);
  assert.ok(card, "the receipt card");
  assert.equal(card.getAttribute("data-followup-seq"), String(dispatched.seq + 1));
  const inside = card.querySelector("[data-role=schedule-reminder] [data-role=followup]");
  assert.ok(inside, "the text the model was given is inside the card");
  assert.equal(inside.hasAttribute("open"), false);
  assert.match(inside.querySelector("pre").textContent, /\[Scheduled reminder\]/);
  assert.equal(
    app.$$("[data-event-type=message/user]").filter((el) => el.getAttribute("data-seq") === String(dispatched.seq + 1)).length,
    0,
    "no bubble of its own",
  );
  assert.deepEqual(app.$$("[data-event-type=message/user] .bubble").map((el) => el.textContent), ["remind me in 10 minutes to stretch"]);

  const name = "remind me in 10 minutes to stretch";
  assert.equal(app.document.title, `(1) ${name} · dsh`);
  assert.equal(FakeNotification.shown.length, 1);
  assert.equal(FakeNotification.shown[0].title, `${name} · stretch`, "the conversation, then the alert");
  assert.equal(FakeNotification.shown[0].body, "Due at 12:10 (UTC)");
  assert.equal(FakeNotification.shown[0].tag, "s/rem-1@2026-03-02T12:10:00.000Z");
  assert.ok(app.beeps.length > beeped, "the chime");
  assert.match(app.$("[data-role=announcer]").textContent, /Reminder: stretch/);
  assert.ok(app.$("[data-role=reminders-empty]"), "the panel has no reminder left");

  // A redraw (the clock, the language) tells nothing again.
  app.clock.advance(1000);
  app.$("[data-lang=zh]").click();
  app.$("[data-lang=en]").click();
  await pump(host, app.timers, { take: false });
  assert.equal(FakeNotification.shown.length, 1);
  assert.equal(app.document.title, `(1) ${name} · dsh`);

  // Clicking the notification brings the reader back to the Session; looking reads it.
  app.document.hasFocus = () => true;
  FakeNotification.shown[0].note.onclick();
  await pump(host, app.timers, { take: false });
  assert.equal(app.focused.length, 1);
  assert.equal(FakeNotification.shown[0].note.closed, true);
  assert.deepEqual(
    host.requests.filter(([method, path]) => method === "POST" && path.endsWith("/read")).map(([, , body]) => body),
    [{ throughSeq: dispatched.seq + 1 }],
    "read through the last seq the window holds",
  );
  assert.equal(host.unread("s"), 0);
  assert.equal(app.document.title, `${name} · dsh`);
});

test("nothing is counted while the reader looks, and a reader who said no is not notified", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  const server = host.addSession("s");
  host.plugins.set("s", schedule());
  const app = await mount({ host, initialSession: "s" });
  FakeNotification.permission = "granted";
  app.controller.attention.refresh();
  const deliver = async (id) => {
    const event = server.append("schedule/change", { change: "dispatch", id });
    server.signal({
      kind: "event",
      event,
      sidecar: { for: "event", view: { scheduleId: id, prompt: `p ${id}`, occurrenceAt: "2026-03-02T12:00:00.000Z", deliveryMode: "session-local" } },
    });
    host.alert("s", event.seq, { title: `p ${id}` });
    await pump(host, app.timers, { take: false });
  };
  await deliver("rem-1");
  assert.equal(app.document.title, "s · dsh", "looking: read at once, no count");
  assert.equal(host.unread("s"), 0);
  app.document.hidden = true;
  await deliver("rem-2");
  await deliver("rem-3");
  assert.equal(app.document.title, "(2) s · dsh");
  assert.equal(FakeNotification.shown.length, 0, "granted, but the reader never pressed Notify me here");
  app.document.hidden = false;
  app.controller.looked();
  await pump(host, app.timers, { take: false });
  assert.equal(app.document.title, "s · dsh");
  assert.equal(host.unread("s"), 0, "the host keeps it: every tab and device agrees");
});

test("a denied permission says so; Notify me is not offered without notifications", async () => {
  const app = await mount();
  FakeNotification.permission = "denied";
  app.controller.attention.refresh();
  const notify = app.$("[data-role=notify]");
  assert.equal(notify.getAttribute("data-state"), "denied");
  assert.ok(notify.hasAttribute("disabled"));
  assert.match(notify.getAttribute("title"), /site settings/);
  app.$("[data-lang=zh]").click();
  assert.match(notify.textContent, /通知已被阻止/);
});

test("a cold Session with a due reminder says it waits, in the list and the header; Deliver now resumes it", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  host.addSession("cold", { live: false, events: [user("remind me")] });
  host.addSession("open");
  host.plugins.set("cold", schedule(reminder("rem-1", { nextAt: "2026-03-02T11:00:00.000Z" })));
  host.plugins.set("open", schedule());
  const app = await mount({ host });
  const entry = () => app.$("[data-session-id=cold] [data-role=session-status]");
  assert.equal(entry().textContent, "🔔 1 reminder waiting", "the list asks a cold Session for its state");
  assert.equal(entry().getAttribute("data-tone"), "waiting");
  assert.equal(app.$("[data-session-id=open] [data-role=session-status]"), null);
  const asked = host.requests.filter(([method, path]) => method === "GET" && path === "/api/sessions/cold").length;
  await app.controller.refreshSessions();
  await pump(host, app.timers);
  assert.equal(host.requests.filter(([method, path]) => method === "GET" && path === "/api/sessions/cold").length, asked, "once per length");

  await app.controller.openSession("cold");
  await pump(host, app.timers);
  assert.equal(app.$("[data-role=session-badge]").getAttribute("data-badge"), "cold");
  assert.equal(app.$("header [data-role=session-status]").textContent, "🔔 1 reminder waiting");
  assert.match(app.$("[data-role=reminders-waiting]").textContent, /due, but this conversation is closed/);
  app.$("[data-action=resume-session]").click();
  await pump(host, app.timers);
  assert.ok(host.requests.some(([method, path]) => method === "POST" && path === "/api/sessions/cold/resume"));
  assert.equal(app.$("[data-role=session-badge]").getAttribute("data-badge"), "live");
  assert.ok(app.$("header [data-role=session-status]").hasAttribute("hidden"), "live: it is being delivered");
  assert.equal(app.$("[data-session-id=cold] [data-badge]").getAttribute("data-badge"), "live", "the list follows");
});

test("a reminder coming due in a cold Session shows up in the list as the clock passes it", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  host.addSession("cold", { live: false });
  host.plugins.set("cold", schedule(reminder("rem-1", { nextAt: "2026-03-02T12:00:30.000Z" })));
  const app = await mount({ host });
  assert.equal(app.$("[data-session-id=cold] [data-role=session-status]"), null);
  app.clock.advance(31_000);
  assert.equal(app.$("[data-session-id=cold] [data-role=session-status]").textContent, "🔔 1 reminder waiting");
});

test("the open/closed badge follows live frames, and a closed Session's log that grows is open", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  const server = host.addSession("s", { events: [user("hi")] });
  host.plugins.set("s", schedule(reminder("rem-1")));
  const app = await mount({ host, initialSession: "s" });
  const badge = app.$("[data-role=session-badge]");
  assert.equal(badge.getAttribute("data-badge"), "live");
  server.signal({ kind: "live", live: false });
  await pump(host, app.timers);
  assert.equal(badge.getAttribute("data-badge"), "cold");
  assert.equal(badge.textContent, "closed", "in plain words");
  assert.equal(app.$("[data-role=transcript]").getAttribute("data-status"), "cold");
  assert.equal(app.$("[data-session-id=s] [data-badge]").getAttribute("data-badge"), "cold");
  assert.match(app.$("[data-role=reminders-waiting]").textContent, /closed, so its reminders wait/);
  server.signal({ kind: "live", live: true });
  await pump(host, app.timers);
  assert.equal(badge.getAttribute("data-badge"), "live");
  // A host without live frames: the detail says cold, then the log grows.
  server.signal({ kind: "live", live: false });
  await pump(host, app.timers);
  server.append("session/end-seed", {});
  await pump(host, app.timers, { take: false });
  assert.equal(badge.getAttribute("data-badge"), "live");
});

test("after the host restarts, the tab reconnects by itself, finds the Session cold and keeps working", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  const server = host.addSession("s", { events: [user("hello")] });
  host.plugins.set("s", schedule(reminder("rem-1", { nextAt: "2026-03-02T12:00:10.000Z" })));
  const app = await mount({ host, initialSession: "s" });
  assert.equal(app.$("[data-role=session-badge]").getAttribute("data-badge"), "live");
  // The restart: the stream drops, every Session is cold on the new process.
  server.restart();
  host.summaries.get("s").live = false;
  await pump(host, app.timers, { take: false, fire: false });
  assert.equal(app.$("[data-role=status]").getAttribute("data-state"), "reconnecting");
  // Never "open" beside "Reconnecting…": while the stream is away the badge says nothing.
  assert.ok(app.$("[data-role=session-badge]").hasAttribute("hidden"));
  await pump(host, app.timers);
  assert.equal(app.controller.currentWindow().status, "live", "reconnected without a reload");
  assert.equal(app.$("[data-role=session-badge]").getAttribute("data-badge"), "cold", "not shown as live any more");
  app.clock.advance(15_000);
  assert.equal(app.$("header [data-role=session-status]").textContent, "🔔 1 reminder waiting");
  // The same tab sends; the message resumes the Session and is stored.
  await app.controller.send("still there?");
  await pump(host, app.timers);
  assert.ok(server.log.some((event) => event.type === "message/user" && event.data.text === "still there?"));
  assert.equal(app.$("[data-role=session-badge]").getAttribute("data-badge"), "live");
  assert.equal(app.$("[data-role=pending]"), null);
});

test("a delivered card's Snooze and Done work through the host, on a closed conversation too", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  const dispatch = { version: 2, change: "dispatch", id: "rem-1", occurrenceAt: "2026-03-02T12:00:00.000Z", missed: 0, recordSeq: 0 };
  const server = host.addSession("s", { live: false, events: [user("remind me to stretch"), ["schedule/change", dispatch], ["schedule/change", { ...dispatch, occurrenceAt: "2026-03-02T12:05:00.000Z" }]] });
  // Cold history: the host computes the receipts' views from the stored log.
  const receipt = (at) => ({ scheduleId: "rem-1", prompt: "stretch", occurrenceAt: at, deliveredAt: at, rule: { kind: "every", seconds: 300 }, timeZone: "UTC", deliveryMode: "session-local" });
  const history = server.history.bind(server);
  server.history = (params) => {
    const answer = history(params);
    answer.views = { 1: receipt("2026-03-02T12:00:00.000Z"), 2: receipt("2026-03-02T12:05:00.000Z") };
    return answer;
  };
  host.plugins.set("s", { "tool-schedule": { reminders: [], firesWhenClosed: true } });
  const actions = [];
  host.onAction = (id, body) => {
    actions.push([id, body]);
    host.summaries.get(id).live = true; // the actions API opens a closed conversation first
    const next = reminder("rem-5", { prompt: "stretch", nextAt: "2026-03-02T12:10:00.000Z" });
    host.plugins.set("s", { "tool-schedule": { reminders: [next], firesWhenClosed: true } });
    return { reminder: next, snoozedFrom: { id: "rem-1", dispatchSeq: body.args.dispatchSeq, occurrenceAt: "2026-03-02T12:00:00.000Z" } };
  };
  const app = await mount({ host, initialSession: "s" });
  app.document.hasFocus = () => false; // away: nothing is read by looking
  host.alert("s", 1, { title: "stretch" });
  host.alert("s", 2, { title: "stretch" });
  await pump(host, app.timers);
  const first = app.$("[data-seq=\"1\"] [data-role=schedule-reminder]");
  assert.equal(first.querySelector("[data-role=reminder-fires]").textContent, "Fires even when this conversation is closed");
  first.querySelector("[data-action=snooze][data-seconds=\"600\"]").click();
  await pump(host, app.timers);
  assert.deepEqual(actions, [["s", { plugin: "tool-schedule", action: "snooze", args: { dispatchSeq: 1, seconds: 600 } }]]);
  assert.equal(first.getAttribute("data-state"), "snoozed");
  assert.equal(first.querySelector("[data-role=reminder-outcome]").textContent, "Snoozed — again at 13:10");
  assert.ok(app.$("[data-reminder-id=rem-5]"), "the new reminder is in the panel");
  assert.equal(host.unread("s"), 1, "the snoozed one is read; the other waits");
  const second = app.$("[data-seq=\"2\"] [data-role=schedule-reminder]");
  second.querySelector("[data-action=done]").click();
  await pump(host, app.timers);
  assert.equal(second.getAttribute("data-state"), "done");
  assert.equal(host.unread("s"), 0);
  assert.equal(app.$("[data-session-id=s] [data-role=unread]").textContent, "");
  assert.deepEqual(
    host.requests.filter(([method, path]) => method === "POST" && path.endsWith("/read")).map(([, , body]) => body.throughSeq),
    [1, 2],
  );
  assert.equal(app.errors.length, 0, app.errors.join("\n"));
});

test("a reminder tool that failed is a sentence in the reader's language; the code waits for developers", async () => {
  const host = new FakeHttpHost({ modules: [UI] });
  host.addSession("s", {
    events: [
      user("remind me yesterday"),
      ["message/assistant", { text: "", toolCalls: [{ id: "c1", name: "schedule_create", arguments: { at: "2020-01-01T00:00:00Z" } }, { id: "c2", name: "other_tool", arguments: {} }] }],
      ["tool/result", { callId: "c1", name: "schedule_create", error: { code: "invalid_rule", message: "at is in the past" } }],
      ["tool/result", { callId: "c2", name: "other_tool", error: { code: "boom", message: "" } }],
    ],
  });
  const app = await mount({ host, initialSession: "s" });
  const call = (id) => app.$(`[data-call-id=${id}]`);
  assert.equal(call("c1").querySelector("[data-role=tool-error]").textContent, "The reminder could not be set: at is in the past");
  assert.equal(call("c1").querySelector("[data-role=error-code]").textContent, "invalid_rule: at is in the past");
  assert.equal(call("c1").querySelector("[data-role=error-details]").hasAttribute("open"), false);
  assert.equal(call("c2").querySelector("[data-role=tool-error]").textContent, "The assistant could not finish a step.", "a tool no plugin words: the host's words");
  app.$("[data-lang=zh]").click();
  assert.equal(call("c1").querySelector("[data-role=tool-error]").textContent, "没能设置提醒：at is in the past");
  assert.equal(call("c1").querySelector("[data-role=error-details] summary").textContent, "开发者详情");
});
