// The bar above the transcript: the drawer's menu button (phones), the open
// Session's title (its id on hover), and the connection status.

import { h } from "./dom.js";

export function createHeader({ document, labels, onMenu }) {
  const menu = h(document, "button", { type: "button", class: "icon menu", "data-role": "menu", "aria-expanded": "false" }, ["☰"]);
  labels.attr(menu, "aria-label", "menu");
  menu.addEventListener("click", () => onMenu());
  const title = h(document, "h1", { class: "title", "data-role": "title" });
  const status = h(document, "span", { class: "status", "data-role": "status", role: "status", hidden: true });
  const element = h(document, "header", { class: "topbar" }, [menu, title, status]);

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
    setDrawer(open) {
      menu.setAttribute("aria-expanded", open ? "true" : "false");
    },
  });
}
