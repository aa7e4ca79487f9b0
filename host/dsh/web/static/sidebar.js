// The sidebar (a drawer under 760 px): New session, the search box, the
// Session list, and the page's settings (language, theme, shortcuts help).

import { h } from "./dom.js";
import { SessionList } from "./session-list.js";

/** How long the search box waits for typing to pause before it asks the host. */
export const SEARCH_DELAY_MS = 250;

/**
 * Build the sidebar. Callbacks: `onNewSession()`, `onSearch(query)`
 * (debounced; Enter searches at once, Esc clears), `onOpen(id)`,
 * `onRename(id, title)`, `onDelete(id)`, `onLang(lang)`, `onTheme()`,
 * `onHelp()`, `onClose()`. `timers` is {setTimeout, clearTimeout}.
 */
export function createSidebar({ document, labels, timers, handlers }) {
  const newSession = labels.text(
    h(document, "button", { type: "button", class: "primary new-session", "data-role": "new-session" }),
    "newSession",
  );
  newSession.addEventListener("click", () => handlers.onNewSession());
  const closeMenu = h(document, "button", { type: "button", class: "icon close-menu", "data-role": "close-menu" }, ["×"]);
  labels.attr(closeMenu, "aria-label", "closeMenu");
  closeMenu.addEventListener("click", () => handlers.onClose());

  const search = h(document, "input", {
    type: "search",
    class: "session-search",
    "data-role": "session-search",
    autocomplete: "off",
  });
  labels.attr(search, "placeholder", "searchPlaceholder");
  labels.attr(search, "aria-label", "searchLabel");
  let pending = null;
  let asked = "";
  const ask = () => {
    if (pending !== null) timers.clearTimeout(pending);
    pending = null;
    const query = search.value.trim();
    if (query === asked) return;
    asked = query;
    handlers.onSearch(query);
  };
  search.addEventListener("input", () => {
    if (pending !== null) timers.clearTimeout(pending);
    pending = timers.setTimeout(ask, SEARCH_DELAY_MS);
  });
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      ask();
    } else if (event.key === "Escape" && search.value !== "") {
      event.preventDefault();
      event.stopPropagation?.();
      search.value = "";
      ask();
    }
  });

  const list = h(document, "ul", { class: "session-list", "data-role": "session-list" });
  labels.attr(list, "aria-label", "sessions");
  const sessions = new SessionList({
    document,
    list,
    onOpen: (id) => handlers.onOpen(id),
    onRename: (id, title) => handlers.onRename(id, title),
    onDelete: (id) => handlers.onDelete(id),
  });

  const langButtons = [
    h(document, "button", { type: "button", class: "lang", "data-lang": "en", lang: "en" }, ["English"]),
    h(document, "button", { type: "button", class: "lang", "data-lang": "zh", lang: "zh" }, ["中文"]),
  ];
  for (const button of langButtons) button.addEventListener("click", () => handlers.onLang(button.getAttribute("data-lang")));
  const langGroup = h(document, "div", { class: "lang-switch", role: "group", "data-role": "lang" }, langButtons);
  labels.attr(langGroup, "aria-label", "language");

  const theme = h(document, "button", { type: "button", class: "icon theme-toggle", "data-role": "theme-toggle" });
  labels.attr(theme, "aria-label", "darkMode");
  labels.attr(theme, "title", "darkMode");
  theme.addEventListener("click", () => handlers.onTheme());
  const help = h(document, "button", { type: "button", class: "icon help", "data-role": "help" }, ["?"]);
  labels.attr(help, "aria-label", "helpTitle");
  labels.attr(help, "title", "helpTitle");
  help.addEventListener("click", () => handlers.onHelp());

  const element = h(document, "aside", { class: "sidebar", "data-role": "sidebar", id: "sidebar" }, [
    h(document, "div", { class: "sidebar-head" }, [h(document, "span", { class: "brand" }, ["dsh"]), closeMenu]),
    newSession,
    search,
    labels.text(h(document, "h2", { class: "sidebar-title" }), "sessions"),
    list,
    h(document, "div", { class: "sidebar-foot" }, [langGroup, h(document, "span", { class: "foot-buttons" }, [theme, help])]),
  ]);

  return Object.freeze({
    element,
    sessions,
    search,
    newSession,
    closeMenu,
    /** The query the list was last asked for. */
    query: () => asked,
    /** Turn New conversation off while the page has no usable token; `why` is its title then. */
    setLocked(on, why = "") {
      if (on) {
        newSession.setAttribute("disabled", "");
        newSession.setAttribute("title", why);
      } else {
        newSession.removeAttribute("disabled");
        newSession.removeAttribute("title");
      }
    },
    setLang(lang) {
      for (const button of langButtons) {
        button.setAttribute("aria-pressed", button.getAttribute("data-lang") === lang ? "true" : "false");
      }
    },
    setTheme(effective) {
      theme.textContent = effective === "dark" ? "☀" : "☾";
      theme.setAttribute("aria-pressed", effective === "dark" ? "true" : "false");
    },
    destroy() {
      if (pending !== null) timers.clearTimeout(pending);
      pending = null;
    },
  });
}
