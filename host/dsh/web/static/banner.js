// The page's one line of bad news (role=alert): a refused token, a failed
// request, a feature the host does not have yet. It keeps a function that
// words the message, so a language switch re-words it.

import { h } from "./dom.js";

export function createBanner(document) {
  const text = h(document, "span", { class: "banner-text" });
  const dismiss = h(document, "button", { type: "button", class: "banner-close", "data-action": "dismiss-banner" }, ["×"]);
  const element = h(document, "div", { class: "banner", "data-role": "banner", role: "alert", hidden: true }, [
    text,
    dismiss,
  ]);
  let words = null;
  dismiss.addEventListener("click", () => clear());

  function show(wording) {
    words = wording;
    text.textContent = words();
    element.removeAttribute("hidden");
  }

  function clear() {
    words = null;
    text.textContent = "";
    element.setAttribute("hidden", "");
  }

  return Object.freeze({
    element,
    show,
    clear,
    /** The wording of the message shown, or null. */
    shown: () => (words === null ? null : words()),
    applyLang(t) {
      dismiss.setAttribute("aria-label", t("dismiss"));
      if (words !== null) text.textContent = words();
    },
  });
}
