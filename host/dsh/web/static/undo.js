// The note after a delete: "“Plans” deleted — Undo", for a few seconds at the
// bottom of the page (role=status: a screen reader hears it without losing
// its place). Undo brings the conversation back through the host
// (`POST /api/sessions/{id}/restore`); after that the CLI still can.

import { h } from "./dom.js";

/** How long Undo is offered, in ms. */
export const UNDO_MS = 8_000;

/**
 * `timers` is {setTimeout, clearTimeout}; `t` the page's translator (read at
 * each show and language change). Returns `{element, offer({name, undo}),
 * dismiss(), shown(), applyLang(t)}`: `offer` shows the note for `ms` and
 * replaces one already shown (its Undo is no longer offered); `undo()` runs
 * once, on the Undo click, and the note goes away at once. The note stays
 * while the pointer or focus is on it, so a reader is never raced.
 */
export function createUndo({ document, timers, t, ms = UNDO_MS }) {
  let words = t;
  const text = h(document, "span", { class: "undo-text", "data-role": "undo-text" });
  const button = h(document, "button", { type: "button", class: "undo-action", "data-action": "undo" });
  const dismissButton = h(document, "button", { type: "button", class: "icon undo-close", "data-action": "dismiss-undo" }, ["×"]);
  const element = h(document, "div", { class: "undo", "data-role": "undo", role: "status", hidden: true }, [text, button, dismissButton]);
  let current = null;
  let timer = null;
  let held = false;

  function clearTimer() {
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
  }

  function arm() {
    clearTimer();
    if (current !== null && !held) timer = timers.setTimeout(() => dismiss(), ms);
  }

  function draw() {
    text.textContent = current === null ? "" : words("undoDeleted", { name: current.name });
    button.textContent = words("undo");
    dismissButton.setAttribute("aria-label", words("dismiss"));
  }

  function offer({ name, undo }) {
    current = { name, undo };
    draw();
    element.removeAttribute("hidden");
    arm();
  }

  function dismiss() {
    clearTimer();
    current = null;
    held = false;
    text.textContent = "";
    element.setAttribute("hidden", "");
  }

  button.addEventListener("click", () => {
    const chosen = current;
    dismiss();
    chosen?.undo();
  });
  dismissButton.addEventListener("click", () => dismiss());
  const hold = () => {
    held = true;
    clearTimer();
  };
  const release = () => {
    held = false;
    arm();
  };
  element.addEventListener("pointerenter", hold);
  element.addEventListener("pointerleave", release);
  element.addEventListener("focusin", hold);
  element.addEventListener("focusout", release);
  draw();

  return Object.freeze({
    element,
    offer,
    dismiss,
    /** The name of the conversation Undo would bring back, or null. */
    shown: () => current?.name ?? null,
    applyLang(next) {
      words = next;
      draw();
    },
  });
}
