// The bar above the transcript: the drawer's menu button (phones), the open
// Session's title (its id on hover), whether it is live or cold, what its
// plugins say about it ("1 reminder waiting"), the connection status, and
// the reader's attention controls (Notify me, sound).

import { isolate } from "./bidi.js";
import { h } from "./dom.js";

export function createHeader({ document, labels, onMenu, controls = null }) {
  const menu = h(document, "button", { type: "button", class: "icon menu", "data-role": "menu", "aria-expanded": "false" }, ["☰"]);
  labels.attr(menu, "aria-label", "menu");
  menu.addEventListener("click", () => onMenu());
  // A title is the person's (or derived from their first message): isolated (bidi.js).
  const title = isolate(h(document, "h1", { class: "title", "data-role": "title" }));
  const badge = h(document, "span", { class: "badge", "data-role": "session-badge", hidden: true });
  const note = h(document, "span", { class: "session-status", "data-role": "session-status", hidden: true });
  const status = h(document, "span", { class: "status", "data-role": "status", role: "status", hidden: true });
  const heading = h(document, "div", { class: "heading" }, [title, badge, note]);
  const element = h(document, "header", { class: "topbar" }, [menu, heading, status, controls]);

  return Object.freeze({
    element,
    menu,
    /** Show `text` as the title, with the full `id` as its tooltip; null clears it. */
    setTitle(text, id) {
      title.textContent = text ?? "";
      if (id) title.setAttribute("title", id);
      else title.removeAttribute("title");
    },
    /** `state` is the window's status; `text` its wording, or "" to hide the badge. */
    setStatus(state, text) {
      status.textContent = text;
      status.setAttribute("data-state", state);
      if (text === "") status.setAttribute("hidden", "");
      else status.removeAttribute("hidden");
    },
    /**
     * `live` is true, false or null (nothing open, or not known); `text` its
     * wording. `notes` are the plugins' statuses (`[{text, tone}]`).
     */
    setSession(live, text, notes = []) {
      if (live === null) {
        badge.setAttribute("hidden", "");
        badge.removeAttribute("data-badge");
      } else {
        const kind = live ? "live" : "cold";
        badge.textContent = text;
        badge.setAttribute("data-badge", kind);
        badge.setAttribute("class", `badge badge-${kind}`);
        badge.removeAttribute("hidden");
      }
      note.textContent = notes.map((item) => item.text).join(" · ");
      note.setAttribute("data-tone", notes[0]?.tone ?? "");
      if (notes.length === 0) note.setAttribute("hidden", "");
      else note.removeAttribute("hidden");
    },
    setDrawer(open) {
      menu.setAttribute("aria-expanded", open ? "true" : "false");
    },
  });
}
