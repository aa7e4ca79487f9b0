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
      Note.shown.push([title, options]);
    }
  }
  return Note;
}

function setup(options = {}) {
  const document = new FakeDocument();
  document.hidden = false;
  document.hasFocus = () => true;
  const changes = [];
  const attention = createAttention({ document, onChange: () => changes.push(attention.count), ...options });
  attention.applyLang(translator("en"));
  return { document, attention, changes, notify: attention.controls.querySelector("[data-role=notify]"), sound: attention.controls.querySelector("[data-role=sound]") };
}

test("away means hidden or unfocused; only then is an alert counted, and looking clears it", () => {
  const { document, attention, changes } = setup();
  assert.equal(attention.looking(), true);
  assert.equal(attention.deliver({ sessionId: "s", title: "t" }), false);
  assert.equal(attention.prefix(), "");
  document.hasFocus = () => false;
  assert.equal(attention.deliver({ sessionId: "s", title: "t" }), true);
  document.hasFocus = () => true;
  document.visibilityState = "hidden";
  assert.equal(attention.deliver({ sessionId: "s", title: "t" }), true);
  assert.equal(attention.prefix(), "(2) ");
  attention.read();
  attention.read();
  assert.deepEqual(changes, [1, 2, 0], "told once per change");
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
  attention.deliver({ sessionId: "s", title: "🔔 Reminder: tea", body: "Due 12:00", tag: "dsh:s:4" });
  assert.deepEqual(Note.shown, [["🔔 Reminder: tea", { body: "Due 12:00", tag: "dsh:s:4" }]]);
  notify.click();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(notify.getAttribute("data-state"), "off");
  assert.equal(store.data.has(NOTIFY_KEY), false);
  attention.deliver({ sessionId: "s", title: "again" });
  assert.equal(Note.shown.length, 1, "off: the title counts, nothing pops up");
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
  assert.equal(attention.deliver({ sessionId: "s", title: "t" }), true);
  assert.equal(attention.prefix(), "(1) ");
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
  attention.deliver({ sessionId: "s", title: "t" });
  assert.deepEqual(played, [], "off: silent");
  sound.click();
  assert.equal(store.data.get(SOUND_KEY), "on");
  assert.equal(sound.getAttribute("aria-pressed"), "true");
  assert.equal(played.length, 2, "the two tones, once, to hear what was switched on");
  attention.deliver({ sessionId: "s", title: "t" });
  assert.equal(played.length, 4);
  assert.ok(played.every((at) => at >= 5));
  sound.click();
  assert.equal(store.data.has(SOUND_KEY), false);

  const again = setup({ storage: storage({ [SOUND_KEY]: "on" }), createAudio: () => null });
  assert.equal(again.sound.getAttribute("data-state"), "on", "the choice persists");
  again.document.hidden = true;
  assert.equal(again.attention.deliver({ sessionId: "s", title: "t" }), true, "no audio: still counted");
  const broken = setup({ storage: storage({ [SOUND_KEY]: "on" }), createAudio: () => { throw new Error("no output"); } });
  broken.document.hidden = true;
  assert.equal(broken.attention.deliver({ sessionId: "s", title: "t" }), true);
});

test("storage that throws costs only the persistence", () => {
  const throwing = { getItem: () => { throw new Error("denied"); }, setItem: () => { throw new Error("denied"); }, removeItem: () => { throw new Error("denied"); } };
  const { sound } = setup({ storage: throwing });
  sound.click();
  assert.equal(sound.getAttribute("data-state"), "on");
  sound.click();
  assert.equal(sound.getAttribute("data-state"), "off");
});
