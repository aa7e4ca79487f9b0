import assert from "node:assert/strict";
import { test } from "node:test";

import { NOTIFY_KEY, SOUND_KEY, createAttention } from "../../host/dsh/web/static/attention.js";
import { translator } from "../../host/dsh/web/static/i18n.js";
import { FakeDocument } from "./fake-dom.mjs";

function storage(initial = {}) {
  const data = new Map(Object.entries(initial));
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, v), removeItem: (k) => data.delete(k) };
}

function notifications(permission = "default", { answer = "granted", throws = false } = {}) {
  class Note {
    static permission = permission;
    static shown = [];
    static async requestPermission() {
      Note.permission = answer;
      return answer;
    }
    constructor(title, options) {
      if (throws) throw new TypeError("Illegal constructor: use ServiceWorkerRegistration.showNotification()");
      this.closed = false;
      Note.shown.push([title, options]);
      Note.shown.at(-1).note = this;
    }

    close() {
      this.closed = true;
    }
  }
  return Note;
}

function setup(options = {}) {
  const document = new FakeDocument();
  document.hidden = false;
  document.hasFocus = () => true;
  const counts = { total: 0 };
  const opened = [];
  const attention = createAttention({ document, total: () => counts.total, onOpen: (id) => opened.push(id), ...options });
  attention.applyLang(translator("en"));
  return { document, attention, counts, opened, notify: attention.controls.querySelector("[data-role=notify]"), sound: attention.controls.querySelector("[data-role=sound]") };
}

test("the title counts every Session's unread alerts, as the host keeps them", () => {
  const { attention, counts } = setup();
  assert.equal(attention.prefix(), "");
  counts.total = 3;
  assert.equal(attention.prefix(), "(3) ");
  assert.equal(attention.count, 3);
  counts.total = 0;
  assert.equal(attention.prefix(), "");
});

test("away means hidden or unfocused; an alert of the conversation on screen is told only then, others always", () => {
  const { document, attention } = setup();
  assert.equal(attention.looking(), true);
  assert.equal(attention.alert({ sessionId: "s", seq: 1, title: "t" }, { open: true }), false, "looking at it: the card says it");
  assert.equal(attention.alert({ sessionId: "t", seq: 1, title: "t" }, { open: false }), true, "another conversation: told");
  document.hasFocus = () => false;
  assert.equal(attention.alert({ sessionId: "s", seq: 2, title: "t" }, { open: true }), true);
  document.hasFocus = () => true;
  document.visibilityState = "hidden";
  assert.equal(attention.alert({ sessionId: "s", seq: 3, title: "t" }, { open: true }), true);
  delete document.hasFocus;
  document.visibilityState = "visible";
  assert.equal(attention.looking(), true, "a document without hasFocus counts as focused");
});

test("Notify me asks only when pressed, then notifies; pressing again turns it off", async () => {
  const Note = notifications("default");
  const store = storage();
  const { document, attention, notify } = setup({ Notification: Note, storage: store });
  assert.match(notify.textContent, /Notify me/);
  assert.equal(notify.getAttribute("aria-pressed"), "false");
  assert.equal(notify.getAttribute("aria-label"), "Notify me");
  notify.click();
  assert.equal(notify.getAttribute("data-state"), "asking");
  assert.ok(notify.hasAttribute("disabled"), "one question at a time");
  notify.click();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(notify.getAttribute("data-state"), "on");
  assert.match(notify.textContent, /Notifying/);
  assert.equal(store.data.get(NOTIFY_KEY), "on");
  document.hasFocus = () => false;
  attention.alert({ sessionId: "s", seq: 4, title: "🔔 Reminder: tea", body: "Due 12:00", tag: "dsh:s:4" }, { name: "Kitchen" });
  assert.deepEqual(Note.shown.map(([title, options]) => [title, options]), [["Kitchen · 🔔 Reminder: tea", { body: "Due 12:00", tag: "dsh:s:4" }]]);
  attention.alert({ sessionId: "s", seq: 5, title: "no name known", tag: "dsh:s:5" });
  assert.equal(Note.shown[1][0], "no name known", "without a conversation title, the alert's own");
  notify.click();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(notify.getAttribute("data-state"), "off");
  assert.equal(store.data.has(NOTIFY_KEY), false);
  attention.alert({ sessionId: "s", seq: 6, title: "again" });
  assert.equal(Note.shown.length, 2, "off: the title counts, nothing pops up");
});

test("a clicked notification focuses the window and opens its conversation", () => {
  const Note = notifications("granted");
  const focused = [];
  const { document, attention, opened } = setup({ Notification: Note, storage: storage({ [NOTIFY_KEY]: "on" }), focusWindow: () => focused.push(true) });
  document.hidden = true;
  attention.alert({ sessionId: "far", seq: 2, title: "tea", tag: "dsh:far:2" });
  Note.shown[0].note.onclick();
  assert.deepEqual(focused, [true]);
  assert.deepEqual(opened, ["far"]);
  assert.equal(Note.shown[0].note.closed, true);
});

test("a count that drops closes that Session's notifications beyond the newest count, and no other's", () => {
  const Note = notifications("granted");
  const { document, attention } = setup({ Notification: Note, storage: storage({ [NOTIFY_KEY]: "on" }) });
  document.hidden = true;
  for (const seq of [3, 9, 5]) attention.alert({ sessionId: "a", seq, title: `a${seq}` });
  attention.alert({ sessionId: "b", seq: 1, title: "b1" });
  const note = (title) => Note.shown.find(([shown]) => shown === title).note;
  attention.unread("a", 2);
  assert.deepEqual(["a3", "a5", "a9", "b1"].map((title) => note(title).closed), [true, false, false, false], "the oldest goes");
  attention.unread("a", 0);
  assert.deepEqual(["a5", "a9", "b1"].map((title) => note(title).closed), [true, true, false], "Done elsewhere: all of it");
  attention.unread("nothing-shown", 0);
});

test("a reader who refuses the permission is not asked again by the page; it says how to allow it", async () => {
  const Note = notifications("default", { answer: "denied" });
  const { notify, attention } = setup({ Notification: Note });
  notify.click();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(notify.getAttribute("data-state"), "denied");
  assert.ok(notify.hasAttribute("disabled"));
  attention.applyLang(translator("zh"));
  assert.match(notify.textContent, /通知已被阻止/);
  assert.match(notify.getAttribute("title"), /网站设置/);
});

test("without notifications there is no Notify me; a browser that refuses page notifications costs only the popup", () => {
  const { notify } = setup({ Notification: null });
  assert.ok(notify.hasAttribute("hidden"));
  const Note = notifications("granted", { throws: true });
  const { document, attention } = setup({ Notification: Note, storage: storage({ [NOTIFY_KEY]: "on" }) });
  document.hidden = true;
  assert.equal(attention.alert({ sessionId: "s", seq: 1, title: "t" }), true);
  attention.unread("s", 0);
});

test("the sound is off by default, persists, plays on switching on and when away, and survives no audio", () => {
  const played = [];
  const audio = {
    currentTime: 5,
    destination: {},
    createOscillator: () => ({ frequency: {}, connect() {}, start: (at) => played.push(at), stop() {} }),
    createGain: () => ({ gain: { setValueAtTime() {}, exponentialRampToValueAtTime() {} }, connect() {} }),
  };
  const store = storage();
  const { document, attention, sound } = setup({ storage: store, createAudio: () => audio });
  assert.equal(sound.getAttribute("data-state"), "off");
  document.hasFocus = () => false;
  attention.alert({ sessionId: "s", seq: 1, title: "t" });
  assert.deepEqual(played, [], "off: silent");
  sound.click();
  assert.equal(store.data.get(SOUND_KEY), "on");
  assert.equal(sound.getAttribute("aria-pressed"), "true");
  assert.equal(played.length, 2, "the two tones, once, to hear what was switched on");
  attention.alert({ sessionId: "s", seq: 1, title: "t" });
  assert.equal(played.length, 4);
  assert.ok(played.every((at) => at >= 5));
  sound.click();
  assert.equal(store.data.has(SOUND_KEY), false);

  const again = setup({ storage: storage({ [SOUND_KEY]: "on" }), createAudio: () => null });
  assert.equal(again.sound.getAttribute("data-state"), "on", "the choice persists");
  again.document.hidden = true;
  assert.equal(again.attention.alert({ sessionId: "s", seq: 1, title: "t" }), true, "no audio: still counted");
  const broken = setup({ storage: storage({ [SOUND_KEY]: "on" }), createAudio: () => { throw new Error("no output"); } });
  broken.document.hidden = true;
  assert.equal(broken.attention.alert({ sessionId: "s", seq: 1, title: "t" }), true);
});

test("storage that throws costs only the persistence", () => {
  const throwing = { getItem: () => { throw new Error("denied"); }, setItem: () => { throw new Error("denied"); }, removeItem: () => { throw new Error("denied"); } };
  const { sound } = setup({ storage: throwing });
  sound.click();
  assert.equal(sound.getAttribute("data-state"), "on");
  sound.click();
  assert.equal(sound.getAttribute("data-state"), "off");
});
