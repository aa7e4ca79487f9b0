// A refused (or missing) access token, said plainly, with a way out that
// needs no reload: a field for the address `dsh web` printed (or the token
// alone). `dsh web` keeps its token across restarts, so this shows only
// after `dsh web --new-token`, a different data dir, or a changed DSH_TOKEN.

import { h } from "./dom.js";

const TOKEN = /^[A-Za-z0-9._~+/=-]{1,512}$/;

/**
 * The token in `text`: the `token` parameter of a pasted address
 * (`http://127.0.0.1:8765/?token=…`), or the text itself when it looks like
 * a token; null otherwise.
 */
export function parseToken(text) {
  const value = String(text ?? "").trim();
  if (value === "") return null;
  if (/[?&]token=/.test(value) || /^[a-z]+:\/\//i.test(value)) {
    try {
      const token = new URL(value, "http://localhost/").searchParams.get("token");
      return token !== null && TOKEN.test(token) ? token : null;
    } catch {
      return null;
    }
  }
  return TOKEN.test(value) ? value : null;
}

/**
 * Build the prompt (hidden); its example address is `origin`'s (the page's
 * own). `onToken(token)` gets a parsed token; it
 * resolves to true when the host accepted it (the prompt then hides), false
 * to say it was refused again.
 */
export function createTokenPrompt({ document, labels, onToken, origin = "http://127.0.0.1:8765" }) {
  const message = h(document, "p", { class: "token-message", "data-role": "token-message" });
  const input = h(document, "input", {
    type: "text",
    class: "token-input",
    "data-role": "token-input",
    autocomplete: "off",
    spellcheck: "false",
  });
  labels.attr(input, "placeholder", "tokenPlaceholder", { origin });
  labels.attr(input, "aria-label", "tokenLabel");
  const use = labels.text(h(document, "button", { type: "submit", class: "primary small", "data-action": "use-token" }), "tokenUse");
  const problem = h(document, "p", { class: "token-problem", "data-role": "token-problem", role: "alert", hidden: true });
  const form = h(document, "form", { class: "token-form" }, [input, use]);
  const element = h(document, "div", { class: "banner token-prompt", "data-role": "token-prompt", role: "alert", hidden: true }, [
    message,
    form,
    problem,
  ]);
  let t = (key) => key;
  let reason = null;
  let error = null;

  form.addEventListener("submit", async (event) => {
    event.preventDefault?.();
    const token = parseToken(input.value);
    if (token === null) {
      say("tokenUnreadable");
      return;
    }
    use.setAttribute("disabled", "");
    try {
      if (await onToken(token)) {
        input.value = "";
        hide();
      } else {
        say("tokenRefusedAgain");
      }
    } finally {
      use.removeAttribute("disabled");
    }
  });

  function say(key) {
    error = key;
    draw();
  }

  function draw() {
    message.textContent = reason === null ? "" : t(reason);
    problem.textContent = error === null ? "" : t(error);
    if (error === null) problem.setAttribute("hidden", "");
    else problem.removeAttribute("hidden");
  }

  function hide() {
    reason = null;
    error = null;
    element.setAttribute("hidden", "");
    draw();
  }

  return Object.freeze({
    element,
    input,
    /** Show it: `why` is "tokenRefused" or "tokenMissing". */
    show(why) {
      reason = why;
      element.removeAttribute("hidden");
      draw();
    },
    hide,
    get shown() {
      return !element.hasAttribute("hidden");
    },
    applyLang(next) {
      t = next;
      draw();
    },
  });
}
