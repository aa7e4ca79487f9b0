// The reasoning block: what a model thought before answering, shown as a
// collapsed disclosure above the answer and never mixed into the answer's
// text. It is drawn for the stored `reasoning` of a `message/assistant`
// event and, while a model streams, filled live from the
// `{"kind":"delta","channel":"reasoning"}` frames (a delta frame without a
// channel is answer text).
//
// How long it thought ("N s"): the event only stores the reasoning text, so
// - live, N is the time from the first to the latest reasoning fragment;
// - stored, N is the time from the event just before the answer (the
//   person's message, or the last tool result) to the answer itself. That
//   also covers writing the answer, so it is labelled "about N s"; when the
//   event before is not in the window, the block just says "Thoughts".
// All text is inserted as text.

import { isolate } from "./bidi.js";
import { h } from "./dom.js";

/** "reasoning" for a reasoning delta frame, else "answer". */
export function deltaChannel(frame) {
  return frame?.channel === "reasoning" ? "reasoning" : "answer";
}

/** The live reasoning of one model call: fragments joined, and when they came. */
export class ReasoningStream {
  #now;
  #text = "";
  #first = null;
  #latest = null;

  /** `now()` returns milliseconds (default `Date.now`). */
  constructor(now = () => Date.now()) {
    this.#now = now;
  }

  /** Add a fragment; returns whether anything was added. */
  add(text) {
    if (typeof text !== "string" || text === "") return false;
    const at = this.#now();
    this.#first ??= at;
    this.#latest = at;
    this.#text += text;
    return true;
  }

  clear() {
    this.#text = "";
    this.#first = null;
    this.#latest = null;
  }

  /** `{text, ms}` while there is live reasoning, else null. */
  snapshot() {
    if (this.#text === "") return null;
    return Object.freeze({ text: this.#text, ms: this.#latest - this.#first });
  }
}

/** The stored reasoning of a `message/assistant` event's data, or null. */
export function storedReasoning(data) {
  return typeof data?.reasoning === "string" && data.reasoning !== "" ? data.reasoning : null;
}

/** Milliseconds from the event just before `event` to it, or null if that one is unknown. */
export function thoughtMs(previous, event) {
  if (previous === null || previous === undefined || previous.seq !== event.seq - 1) return null;
  if (!Number.isFinite(previous.time) || !Number.isFinite(event.time)) return null;
  return Math.max(0, event.time - previous.time);
}

/** Whole seconds for a label (at least 1), or null when `ms` is unknown. */
export function wholeSeconds(ms) {
  return Number.isFinite(ms) && ms >= 0 ? Math.max(1, Math.round(ms / 1000)) : null;
}

/** The disclosure's summary: "Thinking… N s" live, "Thought for about N s" once stored. */
export function reasoningLabel(t, { ms = null, live = false } = {}) {
  const n = wholeSeconds(ms);
  if (live) return n === null ? t("reasoningLive") : t("reasoningLiveFor", { n });
  return n === null ? t("reasoningDone") : t("reasoningDoneFor", { n });
}

/** A collapsed `<details data-role="reasoning">` holding `text` (stored reasoning). */
export function reasoningBlock(doc, t, { text, ms = null }) {
  return h(doc, "details", { class: "reasoning", "data-role": "reasoning" }, [
    h(doc, "summary", {}, [reasoningLabel(t, { ms })]),
    isolate(h(doc, "div", { class: "reasoning-text" }, [text])),
  ]);
}

/**
 * The live block, one element reused across renders, so that a reader who
 * opened it keeps it open while it grows.
 */
export class LiveReasoningBlock {
  #element = null;
  #summary = null;
  #body = null;

  /** The element for `live` (`{text, ms}` or null), updated in place; null when none. */
  element(doc, t, live) {
    if (live === null || live === undefined) {
      this.#element = null;
      return null;
    }
    if (this.#element === null || this.#element.ownerDocument !== doc) {
      this.#summary = h(doc, "summary");
      this.#body = isolate(h(doc, "div", { class: "reasoning-text" }));
      this.#element = h(doc, "details", {
        class: "reasoning reasoning-live",
        "data-role": "reasoning",
        "data-live": "true",
      }, [this.#summary, this.#body]);
    }
    this.#summary.textContent = reasoningLabel(t, { ms: live.ms, live: true });
    this.#body.textContent = live.text;
    return this.#element;
  }
}
