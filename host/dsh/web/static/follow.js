// Where the transcript is scrolled, across renders: a reader at the bottom
// follows new content, a reader scrolled up stays put (and is shown a
// "new messages" pill when events arrive below), loading older events keeps
// the reader's place, and the reader's own send always goes to the bottom.

import { h } from "./dom.js";

/** Pixels from the bottom within which the view counts as "at the bottom". */
export const STICKY_BOTTOM = 80;

/**
 * Follow `scroller` (the `[data-role=transcript]` element). The pill
 * (`[data-role=new-messages]`, a button) is `follower.pill`: put it in the
 * page next to the transcript.
 */
export function createFollower({ document, labels, scroller }) {
  const pill = h(document, "button", { type: "button", class: "new-messages", "data-role": "new-messages", hidden: true });
  labels.text(pill, "newMessages");
  let stick = false;

  const atBottom = () => {
    const { scrollTop, scrollHeight, clientHeight } = scroller;
    if (![scrollTop, scrollHeight, clientHeight].every(Number.isFinite)) return true;
    return scrollHeight - scrollTop - clientHeight < STICKY_BOTTOM;
  };
  const hidePill = () => pill.setAttribute("hidden", "");
  const toBottom = () => {
    if (Number.isFinite(scroller.scrollHeight)) scroller.scrollTop = scroller.scrollHeight;
    hidePill();
  };

  pill.addEventListener("click", () => toBottom());
  scroller.addEventListener("scroll", () => {
    if (atBottom()) hidePill();
  });

  return Object.freeze({
    pill,
    /** Before a render: where the reader is. */
    measure() {
      return { atBottom: atBottom(), scrollTop: scroller.scrollTop, scrollHeight: scroller.scrollHeight };
    },
    /**
     * After a render: `grew` when new events arrived at the end, `prepended`
     * when older ones were added above.
     */
    restore(before, { grew = false, prepended = false } = {}) {
      if (!Number.isFinite(scroller.scrollHeight) || !Number.isFinite(before.scrollHeight)) return;
      if (stick) {
        stick = false;
        toBottom();
      } else if (prepended) {
        scroller.scrollTop = before.scrollTop + (scroller.scrollHeight - before.scrollHeight);
      } else if (before.atBottom) {
        toBottom();
      } else if (grew) {
        pill.removeAttribute("hidden");
      }
    },
    /** The reader sent something: the next render goes to the bottom. */
    stick() {
      stick = true;
    },
    /** A new Session is shown: start at its bottom, no pill. */
    reset() {
      stick = true;
      hidePill();
    },
    toBottom,
    get pillShown() {
      return !pill.hasAttribute("hidden");
    },
  });
}
