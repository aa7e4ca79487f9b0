// What a screen reader hears: only new messages, one short line each, through
// a visually hidden polite live region. The transcript itself is not live, so
// tool internals, reloads and re-renders are never read out.

import { h } from "./dom.js";

/** Lines kept in the region (older ones are removed; they were already read). */
const KEEP = 5;
/** Characters of a message read out; the rest is in the transcript. */
const MAX_CHARS = 300;

export function createAnnouncer(document) {
  const element = h(document, "div", {
    class: "visually-hidden",
    "data-role": "announcer",
    "aria-live": "polite",
    "aria-relevant": "additions",
  });
  return Object.freeze({
    element,
    /** Read `text` out (trimmed to a few hundred characters). */
    announce(text) {
      const line = String(text).trim();
      if (line === "") return;
      const short = line.length > MAX_CHARS ? `${line.slice(0, MAX_CHARS)}…` : line;
      element.appendChild(h(document, "p", {}, [short]));
      while (element.children.length > KEEP) element.children[0].remove();
    },
    clear() {
      element.replaceChildren();
    },
  });
}
