// Being told: an alert of any Session (a delivered reminder, heard on the
// host-wide stream: everywhere.js) that the reader is not looking at — the
// page is hidden, another window has the focus, or another conversation is
// open — shows, only if the reader allowed it, a system notification naming
// it (clicked, it opens its conversation) and plays a short sound if that is
// on. The tab title counts the unread alerts of every Session, "(2) …": the
// host keeps those counts, so this module only draws them (`total()`), and
// when a Session's count drops (read here, or Done on a phone) its
// notifications beyond the newest `count` are closed.
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
 * Options: `document`, `Notification` (the constructor, or null where there
 * is none), `storage` (localStorage or null), `createAudio()` (a new
 * AudioContext, or null), `focusWindow()`, `onOpen(sessionId)` (a
 * notification was clicked), `total()` (the unread alerts of every Session).
 *
 * Returns `{controls, count, looking(), alert(alert, options), unread(id,
 * count), prefix(), applyLang(t), refresh()}`.
 */
export function createAttention({
  document,
  Notification = null,
  storage = null,
  createAudio = () => null,
  focusWindow = () => {},
  onOpen = () => {},
  total = () => 0,
}) {
  let t = (key) => key;
  let audio = null;
  let asking = false;
  // Each Session's notifications on screen, oldest first: `[{seq, note}]`.
  const shown = new Map();
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
   * A new, unread alert `{sessionId, seq, title, body, tag}`. `name` is its
   * conversation's title, if known (it prefixes the notification's);
   * `open` is true when its Session is the one on screen. Unless the reader
   * is looking at that very conversation, it is notified (if allowed) and
   * chimed (if on). Returns true if the reader was told.
   */
  function alert(news, { name = null, open = false } = {}) {
    if (open && looking()) return false;
    if (notifyOn && permission() === "granted") show(news, name);
    if (soundOn) chime();
    return true;
  }

  /** Session `sessionId` has `count` unread alerts now: close its notifications beyond the newest `count`. */
  function unread(sessionId, count) {
    const notes = shown.get(sessionId);
    if (notes === undefined) return;
    const keep = Math.max(0, count);
    for (const { note } of notes.splice(0, Math.max(0, notes.length - keep))) close(note);
    if (notes.length === 0) shown.delete(sessionId);
  }

  function show({ sessionId, seq, title, body = "", tag }, name) {
    const heading = typeof name === "string" && name !== "" ? `${name} · ${title}` : String(title);
    let note;
    try {
      note = new Notification(heading, { body: String(body), tag: tag ?? undefined });
    } catch {
      // Some browsers allow notifications only from a service worker: the
      // title count still tells.
      return;
    }
    note.onclick = () => {
      focusWindow();
      onOpen(sessionId);
      close(note);
    };
    const notes = shown.get(sessionId) ?? [];
    // One per occurrence: the browser replaces a note of the same tag.
    const same = notes.findIndex((item) => item.seq === seq);
    if (same !== -1) notes.splice(same, 1);
    notes.push({ seq, note });
    notes.sort((a, b) => a.seq - b.seq);
    shown.set(sessionId, notes);
  }

  function close(note) {
    try {
      note.close?.();
    } catch {
      // Already gone.
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
    /** The unread alerts of every Session. */
    get count() {
      return total();
    },
    looking,
    alert,
    unread,
    /** "(N) " while something is unread, else "". */
    prefix: () => {
      const count = total();
      return count > 0 ? `(${count}) ` : "";
    },
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
