// The composer: a growing textarea, Send, and Stop while a turn runs.
// Enter sends, Shift+Enter is a newline, and Enter that confirms an IME
// composition (typing 中文) does neither.

import { h } from "./dom.js";

const MAX_HEIGHT = 200;

/**
 * Build the composer. `onSend(text)` is called with the textarea's text on
 * Enter or Send; `onStop()` when Stop is pressed.
 */
export function createComposer({ document, labels, onSend, onStop }) {
  const textarea = h(document, "textarea", { class: "composer", "data-role": "composer", rows: 1 });
  labels.attr(textarea, "placeholder", "composerPlaceholder");
  labels.attr(textarea, "aria-label", "composerLabel");
  labels.attr(textarea, "title", "composerHint");
  const send = labels.text(h(document, "button", { type: "submit", class: "primary send", "data-role": "send" }), "send");
  const stop = labels.text(
    h(document, "button", { type: "button", class: "stop", "data-role": "stop", hidden: true }),
    "stop",
  );
  labels.attr(stop, "title", "stopHint");
  const form = h(document, "form", { class: "composer-bar", "data-role": "composer-form" }, [textarea, stop, send]);

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onSend(textarea.value);
  });
  textarea.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    event.preventDefault();
    onSend(textarea.value);
  });
  textarea.addEventListener("input", () => grow());
  stop.addEventListener("click", () => onStop());

  function grow() {
    const style = textarea.style;
    if (!style || !Number.isFinite(textarea.scrollHeight)) return;
    style.height = "auto";
    style.height = `${Math.min(textarea.scrollHeight, MAX_HEIGHT)}px`;
  }

  return Object.freeze({
    element: form,
    textarea,
    get value() {
      return textarea.value;
    },
    set value(text) {
      textarea.value = text;
      grow();
    },
    focus() {
      textarea.focus?.();
    },
    /** Show Stop while a turn runs; `busy` while its request is in flight. */
    setRunning(running, busy = false) {
      if (running) stop.removeAttribute("hidden");
      else stop.setAttribute("hidden", "");
      if (busy) stop.setAttribute("disabled", "");
      else stop.removeAttribute("disabled");
    },
  });
}
