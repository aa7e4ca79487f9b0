// The sidebar list of Sessions: newest first, each `[data-session-id]` with
// its title (a short id until it has one), a live/cold badge, the fork
// lineage, what its plugins say about it (`[data-role=session-status]`,
// "1 reminder waiting"), and rename / delete actions. Rename is inline: the title becomes
// a field (Enter or leaving it saves, Esc cancels); while it is open the list
// is not redrawn (that would take the field's focus away), only afterwards.
//
// Keyboard: Tab reaches the open Session's actions only (one tab stop per
// entry otherwise); on an entry, ↑/↓ move, F2 renames, Delete deletes.

import { h } from "./dom.js";

/** Longest title the host keeps. */
export const MAX_TITLE = 200;

/** Sessions sorted newest first (by createdAt, then id for a stable order). */
export function sortSessions(sessions) {
  return [...sessions].sort(
    (a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0) || String(a.id).localeCompare(String(b.id)),
  );
}

/** Ids are long; the first 12 characters tell them apart in a list. */
export function shortId(id) {
  const text = String(id);
  return text.length > 14 ? `${text.slice(0, 12)}…` : text;
}

/** What a Session is called: its title, else its short id. */
export function sessionName(summary) {
  const title = typeof summary?.title === "string" ? summary.title.trim() : "";
  return title !== "" ? title : shortId(summary?.id ?? "");
}

export class SessionList {
  #doc;
  #list;
  #onOpen;
  #onRename;
  #onDelete;
  #editing = null;
  #state = { sessions: [], currentId: null, t: (key) => key, time: null, query: "", statuses: () => [] };

  /**
   * `list` is the `[data-role=session-list]` element. `onOpen(id)`,
   * `onRename(id, title)` and `onDelete(id)` are called on the reader's
   * actions (a rename only with a changed, non-empty title).
   */
  constructor({ document, list, onOpen, onRename, onDelete }) {
    this.#doc = document;
    this.#list = list;
    this.#onOpen = onOpen;
    this.#onRename = onRename;
    this.#onDelete = onDelete;
    list.addEventListener("click", (event) => this.#click(event));
    list.addEventListener("keydown", (event) => this.#key(event));
  }

  /**
   * Draw `sessions`; `time` formats their creation time (createTimeFormat),
   * `query` words the empty state of a search, `statuses(session)` gives
   * the plugins' lines about a Session (`[{text, tone}]`).
   */
  render({ sessions, currentId, t, time = null, query = "", statuses = () => [] }) {
    this.#state = { sessions, currentId, t, time, query, statuses };
    if (this.#editing === null) this.#draw();
  }

  #draw() {
    const { sessions, t, query } = this.#state;
    // Redrawing replaces the entries: keep the keyboard where it was.
    const focused = this.#doc.activeElement;
    const inside = focused && focused !== this.#list && this.#list.contains(focused);
    const focusId = inside ? focused.closest("[data-session-id]")?.getAttribute("data-session-id") : null;
    const focusAction = inside ? (focused.getAttribute("data-action") ?? "open") : null;
    const items = sortSessions(sessions).map((session) => this.#item(session));
    if (items.length === 0) {
      const text = query ? t("noMatches", { query }) : t("noSessions");
      items.push(h(this.#doc, "li", { class: "empty", "data-role": "no-sessions" }, [text]));
    }
    this.#list.replaceChildren(...items);
    if (focusId) this.#focusEntry(focusId, focusAction);
  }

  /** Turn the entry of `id` into a title field. */
  startRename(id) {
    const session = this.#state.sessions.find((item) => item.id === id);
    if (session === undefined) return;
    const input = h(this.#doc, "input", {
      type: "text",
      class: "rename-input",
      "data-role": "rename-input",
      maxlength: MAX_TITLE,
      "aria-label": this.#state.t("renameLabel"),
    });
    input.value = typeof session.title === "string" ? session.title : "";
    const editing = { id, input, done: false };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        this.#finishRename(editing, true);
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation?.();
        this.#finishRename(editing, false);
      }
    });
    input.addEventListener("blur", () => this.#finishRename(editing, true));
    this.#editing = editing;
    this.#draw();
    input.focus?.();
    input.select?.();
  }

  /** The id being renamed, or null. */
  get editingId() {
    return this.#editing?.id ?? null;
  }

  #finishRename(editing, save) {
    if (editing.done) return;
    editing.done = true;
    if (this.#editing === editing) this.#editing = null;
    const session = this.#state.sessions.find((item) => item.id === editing.id);
    const title = editing.input.value.trim();
    this.#draw();
    this.#focusEntry(editing.id);
    if (save && session !== undefined && title !== "" && title !== (session.title ?? "")) {
      this.#onRename(editing.id, title);
    }
  }

  #item(session) {
    const doc = this.#doc;
    const { currentId, t, time } = this.#state;
    const current = session.id === currentId;
    const badge = session.live ? "live" : "cold";
    const count = session.length ?? 0;
    const created = Number.isFinite(session.createdAt) && time !== null ? time.short(session.createdAt) : "";
    const meta = [created, count === 1 ? t("oneEvent") : t("events", { n: count })];
    if (session.lineage?.parentId) meta.push(t("forkOf", { id: shortId(session.lineage.parentId) }));
    const metaLine = h(doc, "span", { class: "session-meta" }, [meta.filter(Boolean).join(" · ")]);
    const notes = this.#state.statuses(session);
    const noteLine =
      notes.length === 0
        ? null
        : h(doc, "span", { class: "session-note", "data-role": "session-status", "data-tone": notes[0].tone }, [
            notes.map((note) => note.text).join(" · "),
          ]);
    const badgeElement = h(doc, "span", { class: `badge badge-${badge}`, "data-badge": badge }, [t(badge)]);
    const item = h(doc, "li", {
      class: current ? "session current" : "session",
      "data-session-id": session.id,
      "aria-current": current ? "true" : undefined,
    });
    if (this.#editing?.id === session.id) {
      item.setAttribute("data-editing", "");
      item.append(
        h(doc, "span", { class: "session-line" }, [this.#editing.input, badgeElement]),
        metaLine,
      );
      if (noteLine !== null) item.append(noteLine);
      return item;
    }
    const open = h(doc, "button", {
      type: "button",
      class: "session-open",
      "data-action": "open",
      title: session.id,
    }, [
      h(doc, "span", { class: "session-line" }, [
        h(doc, "span", { class: "session-title", "data-role": "session-title" }, [sessionName(session)]),
        badgeElement,
      ]),
      metaLine,
      noteLine,
    ]);
    // Only the open Session's actions are tab stops; the others are a click
    // (or F2 / Delete on their entry) away.
    const tabindex = current ? undefined : "-1";
    const action = (name, glyph, label) =>
      h(doc, "button", {
        type: "button",
        class: `session-action session-${name}`,
        "data-action": name,
        "aria-label": label,
        title: label,
        tabindex,
      }, [glyph]);
    item.append(
      open,
      h(doc, "span", { class: "session-actions" }, [
        action("rename", "✎", t("rename")),
        action("delete", "🗑", t("delete")),
      ]),
    );
    return item;
  }

  #click(event) {
    const item = event.target?.closest?.("[data-session-id]");
    if (!item || item.hasAttribute("data-editing")) return;
    const id = item.getAttribute("data-session-id");
    const action = event.target.closest("[data-action]")?.getAttribute("data-action") ?? "open";
    if (action === "rename") this.startRename(id);
    else if (action === "delete") this.#onDelete(id);
    else this.#onOpen(id);
  }

  #key(event) {
    const item = event.target?.closest?.("[data-session-id]");
    if (!item || item.hasAttribute("data-editing")) return;
    const id = item.getAttribute("data-session-id");
    if (event.key === "F2") {
      event.preventDefault();
      this.startRename(id);
    } else if (event.key === "Delete") {
      event.preventDefault();
      this.#onDelete(id);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const entries = [...this.#list.querySelectorAll("[data-session-id]")];
      const next = entries[entries.indexOf(item) + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) {
        event.preventDefault();
        this.#focusEntry(next.getAttribute("data-session-id"));
      }
    }
  }

  #focusEntry(id, action = "open") {
    for (const entry of this.#list.querySelectorAll("[data-session-id]")) {
      if (entry.getAttribute("data-session-id") !== id) continue;
      const target = entry.querySelector(`[data-action=${action}]`) ?? entry.querySelector("[data-action=open]");
      target?.focus?.();
    }
  }
}
