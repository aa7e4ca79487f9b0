// Being told: when something a plugin flags (registry.registerAlert: a
// delivered reminder) arrives while the reader is not looking — the page is
// hidden or another window has the focus — the tab title counts it, "(2) …",
// and, only if the reader allowed it, a system notification names it and a
// short sound plays. Looking at the page again clears the count.
//
// Nothing is ever asked on load: the notification permission is requested
// only when the reader presses "Notify me" ([data-role=notify]). The sound
// ([data-role=sound]) is off until switched on; both choices persist in
// localStorage. Everything is injected, so node tests drive it.

import { h } from "./dom.js";

export const NOTIFY_KEY = "dsh.notify";
export const SOUND_KEY = "dsh.sound";
/** The beep: a short, soft two-tone chime. */
const CHIME = [
  [880, 0, 0.12],
  [1320, 0.14, 0.18],
];

/**
 * Options: `document`, `labels` (i18n.Labels), `Notification` (the
 * constructor, or null where there is none), `storage` (localStorage or
 * null), `createAudio()` (a new AudioContext, or null), `focusWindow()`,
 * `onOpen(sessionId)` (a notification was clicked), `onChange()` (the count
 * changed: redraw the title).
 *
 * Returns `{controls, count, looking(), deliver(alert), read(), prefix(),
 * applyLang(t), refresh()}`.
 */
export function createAttention({
  document,
  Notification = null,
  storage = null,
  createAudio = () => null,
  focusWindow = () => {},
  onOpen = () => {},
  onChange = () => {},
}) {
  let count = 0;
  let t = (key) => key;
  let audio = null;
  let asking = false;
  // On only once the reader pressed Notify me (a permission the browser
  // granted some other time is not their say-so for this page).
  let notifyOn = read(storage, NOTIFY_KEY) === "on";
  let soundOn = read(storage, SOUND_KEY) === "on";

  const notify = h(document, "button", { type: "button", class: "chip notify", "data-role": "notify" });
  const sound = h(document, "button", { type: "button", class: "chip sound", "data-role": "sound" });
  notify.addEventListener("click", () => toggleNotify());
  sound.addEventListener("click", () => toggleSound());
  const controls = h(document, "span", { class: "attention", "data-role": "attention" }, [notify, sound]);

  const permission = () => (Notification === null ? "unsupported" : String(Notification.permission ?? "default"));

  /** True while the reader can see the page and it has the focus. */
  function looking() {
    if (document.hidden === true || document.visibilityState === "hidden") return false;
    return typeof document.hasFocus === "function" ? document.hasFocus() : true;
  }

  /**
   * Something arrived: `{sessionId, title, body, tag}`. When the reader is
   * not looking it is counted, notified (if allowed) and chimed (if on).
   * Returns true if it was counted.
   */
  function deliver(alert) {
    if (looking()) return false;
    count += 1;
    onChange();
    if (notifyOn && permission() === "granted") show(alert);
    if (soundOn) chime();
    return true;
  }

  function show({ sessionId, title, body = "", tag }) {
    try {
      const note = new Notification(String(title), { body: String(body), tag: tag ?? undefined });
      note.onclick = () => {
        focusWindow();
        onOpen(sessionId);
        note.close?.();
      };
    } catch {
      // Some browsers allow notifications only from a service worker: the
      // title count still tells.
    }
  }

  function chime() {
    try {
      audio ??= createAudio();
      if (audio === null) return;
      audio.resume?.();
      const start = audio.currentTime ?? 0;
      for (const [frequency, offset, length] of CHIME) {
        const tone = audio.createOscillator();
        const gain = audio.createGain();
        tone.frequency.value = frequency;
        gain.gain.setValueAtTime(0.0001, start + offset);
        gain.gain.exponentialRampToValueAtTime(0.12, start + offset + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, start + offset + length);
        tone.connect(gain);
        gain.connect(audio.destination);
        tone.start(start + offset);
        tone.stop(start + offset + length + 0.02);
      }
    } catch {
      // No audio output: the title and the notification still tell.
    }
  }

  async function toggleNotify() {
    if (asking) return;
    const state = permission();
    if (state === "granted") {
      notifyOn = !notifyOn;
    } else if (state === "default") {
      asking = true;
      refresh();
      try {
        await Notification.requestPermission();
      } catch {
        // A browser that refuses the request outright: the state says so.
      } finally {
        asking = false;
      }
      notifyOn = permission() === "granted";
    }
    write(storage, NOTIFY_KEY, notifyOn ? "on" : null);
    refresh();
  }

  function toggleSound() {
    soundOn = !soundOn;
    write(storage, SOUND_KEY, soundOn ? "on" : null);
    // Browsers start audio only from a click: make the context now, and let
    // the reader hear what they switched on.
    if (soundOn) chime();
    refresh();
  }

  /** Redraw the two controls from the permission and the choices. */
  function refresh() {
    const state = permission();
    if (state === "unsupported") {
      notify.setAttribute("hidden", "");
    } else {
      notify.removeAttribute("hidden");
      const on = state === "granted" && notifyOn;
      const key = { granted: on ? "notifyOn" : "notifyMe", denied: "notifyBlocked" }[state] ?? "notifyMe";
      label(notify, on ? "🔔" : "🔕", t(key));
      notify.setAttribute("data-state", asking ? "asking" : state === "granted" ? (on ? "on" : "off") : state);
      notify.setAttribute("aria-pressed", on ? "true" : "false");
      notify.setAttribute("title", t(state === "denied" ? "notifyBlockedHint" : on ? "notifyOnHint" : "notifyHint"));
      if (state === "denied" || asking) notify.setAttribute("disabled", "");
      else notify.removeAttribute("disabled");
    }
    label(sound, soundOn ? "🔊" : "🔈", t(soundOn ? "soundOn" : "soundOff"));
    sound.setAttribute("aria-pressed", soundOn ? "true" : "false");
    sound.setAttribute("title", t("soundHint"));
    sound.setAttribute("data-state", soundOn ? "on" : "off");
  }

  /** An icon and words; on a phone only the icon shows, the words stay its label. */
  function label(button, icon, words) {
    button.replaceChildren(
      h(document, "span", { class: "chip-icon", "aria-hidden": "true" }, [icon]),
      h(document, "span", { class: "chip-text" }, [` ${words}`]),
    );
    button.setAttribute("aria-label", words);
  }

  refresh();
  return Object.freeze({
    controls,
    get count() {
      return count;
    },
    looking,
    deliver,
    /** The reader is looking at the Session: the count goes. */
    read() {
      if (count === 0) return;
      count = 0;
      onChange();
    },
    /** "(N) " while something is unread, else "". */
    prefix: () => (count > 0 ? `(${count}) ` : ""),
    applyLang(next) {
      t = next;
      refresh();
    },
    refresh,
  });
}

function read(storage, key) {
  try {
    return storage?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

function write(storage, key, value) {
  try {
    if (value === null) storage?.removeItem(key);
    else storage?.setItem(key, value);
  } catch {
    // Storage can be disabled: the choice lasts for this page only.
  }
}
