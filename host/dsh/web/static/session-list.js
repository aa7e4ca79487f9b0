// The sidebar list of Sessions (conversations, to the reader): newest first,
// each `[data-session-id]` with its title (a short id until it has one; two
// lines at most, the whole title on hover), its unread count
// (`[data-role=unread]`, public: empty and hidden at 0), a "fork" mark and
// whose fork it is, when it was last active, whether it is open or closed,
// what its plugins say about it (`[data-role=session-status]`, "1 reminder
// waiting"), and rename / delete actions. Rename is inline: the title becomes
// a field (Enter or leaving it saves, Esc cancels); while it is open the list
// is not redrawn (that would take the field's focus away), only afterwards.
//
// Keyboard: every entry is a tab stop (its open button); Tab reaches the open
// Session's actions only; on any entry, ↑/↓ move, F2 renames, Delete deletes.

import { isolate } from "./bidi.js";
import { h } from "./dom.js";

/** Longest title the host keeps. */
export const MAX_TITLE = 200;

/** Sessions sorted newest first (by createdAt, then id for a stable order). */
export function sortSessions(sessions) {
  return [...sessions].sort(
    (a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0) || String(a.id).localeCompare(String(b.id)),
  );
}

/**
 * `text` cut into `[piece, marked]` pairs: the places where a word of `query`
 * occurs (case-insensitive) are marked. Never HTML: the caller makes text nodes.
 */
export function markWords(text, query) {
  const words = String(query ?? "")
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== "");
  const lower = text.toLowerCase();
  const marks = new Array(text.length).fill(false);
  for (const word of words) {
    for (let at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + word.length)) {
      // Lower-casing can change lengths (rare: İ); then the marks are only approximate.
      for (let i = at; i < Math.min(text.length, at + word.length); i += 1) marks[i] = true;
    }
  }
  const parts = [];
  for (let i = 0; i < text.length; ) {
    let j = i;
    while (j < text.length && marks[j] === marks[i]) j += 1;
    parts.push([text.slice(i, j), marks[i]]);
    i = j;
  }
  return parts;
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

/** True when `session` was forked from another (its lineage names a parent). */
export function isFork(session) {
  return typeof session?.lineage?.parentId === "string" && session.lineage.parentId !== "";
}

export class SessionList {
  #doc;
  #list;
  #onOpen;
  #onRename;
  #onDelete;
  #editing = null;
  #state = {
    sessions: [],
    currentId: null,
    t: (key) => key,
    time: null,
    now: 0,
    query: "",
    statuses: () => [],
    unread: () => 0,
  };

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
   * Draw `sessions`; `time` words their last activity (createTimeFormat)
   * relative to `now` (ms), `query` words the empty state of a search,
   * `statuses(session)` gives the plugins' lines about a Session
   * (`[{text, tone}]`), `unread(session)` its count of unread alerts.
   */
  render({ sessions, currentId, t, time = null, now = Date.now(), query = "", statuses = () => [], unread = (session) => session.unread ?? 0, locked = false }) {
    this.#state = { sessions, currentId, t, time, now, query, statuses, unread, locked };
    if (this.#editing === null) this.#draw();
  }

  #draw() {
    const { sessions, t, query, locked } = this.#state;
    // Redrawing replaces the entries: keep the keyboard where it was.
    const focused = this.#doc.activeElement;
    const inside = focused && focused !== this.#list && this.#list.contains(focused);
    const focusId = inside ? focused.closest("[data-session-id]")?.getAttribute("data-session-id") : null;
    const focusAction = inside ? (focused.getAttribute("data-action") ?? "open") : null;
    // A search answers in its own order (title matches, then the best-ranked messages).
    const ordered = query ? sessions : sortSessions(sessions);
    const items = ordered.map((session) => this.#item(session));
    if (items.length === 0) {
      const text = locked ? t("noSessionsLocked") : query ? t("noMatches", { query }) : t("noSessions");
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
      dir: "auto",
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
    const { currentId, t } = this.#state;
    const current = session.id === currentId;
    const metaLine = h(doc, "span", { class: "session-meta" }, this.#meta(session));
    const notes = this.#state.statuses(session);
    const noteLine =
      notes.length === 0
        ? null
        : h(doc, "span", { class: "session-note", "data-role": "session-status", "data-tone": notes[0].tone }, [
            notes.map((note) => note.text).join(" · "),
          ]);
    const item = h(doc, "li", {
      class: current ? "session current" : "session",
      "data-session-id": session.id,
      "aria-current": current ? "true" : undefined,
    });
    if (this.#editing?.id === session.id) {
      item.setAttribute("data-editing", "");
      item.append(h(doc, "span", { class: "session-line" }, [this.#editing.input]), metaLine);
      if (noteLine !== null) item.append(noteLine);
      return item;
    }
    const name = sessionName(session);
    const open = h(doc, "button", {
      type: "button",
      class: "session-open",
      "data-action": "open",
      title: session.id,
    }, [
      h(doc, "span", { class: "session-line" }, [
        isFork(session) ? h(doc, "span", { class: "fork-mark", "data-role": "fork" }, [t("forkMark")]) : null,
        // The person's words (bidi.js): its own direction, isolated from the line.
        isolate(h(doc, "span", { class: "session-title", "data-role": "session-title", title: name }, [name])),
        this.#unread(session),
      ]),
      metaLine,
      this.#match(session),
      noteLine,
    ]);
    // Only the open Session's actions are tab stops; the others are a click
    // (or F2 / Delete on their entry) away.
    const tabindex = current ? undefined : "-1";
    const action = (name, glyph, label, key) =>
      h(doc, "button", {
        type: "button",
        class: `session-action session-${name}`,
        "data-action": name,
        "aria-label": label,
        "aria-keyshortcuts": key,
        title: `${label} (${key})`,
        tabindex,
      }, [glyph]);
    item.append(
      open,
      h(doc, "span", { class: "session-actions" }, [
        action("rename", "✎", t("rename"), "F2"),
        action("delete", "🗑", t("delete"), "Delete"),
      ]),
    );
    return item;
  }

  /** The message a search found, with the searched words marked (text nodes only). */
  #match(session) {
    const found = session.match;
    if (!this.#state.query || typeof found?.snippet !== "string" || found.snippet === "") return null;
    const doc = this.#doc;
    const parts = markWords(found.snippet, this.#state.query).map(([text, marked]) =>
      marked ? h(doc, "mark", {}, [text]) : doc.createTextNode(text),
    );
    return isolate(h(doc, "span", { class: "session-match", "data-role": "session-match" }, parts));
  }

  /** When it was last active, whose fork it is, and whether it is open. */
  #meta(session) {
    const doc = this.#doc;
    const { t, time, now, sessions } = this.#state;
    const parts = [];
    const active = Number.isFinite(session.updatedAt) ? session.updatedAt : session.createdAt;
    if (Number.isFinite(active) && time !== null) {
      parts.push(h(doc, "span", { "data-role": "session-active", title: time.full(active) }, [time.ago(active, now, t)]));
    }
    if (isFork(session)) {
      const parent = sessions.find((item) => item.id === session.lineage.parentId);
      const name = parent === undefined ? shortId(session.lineage.parentId) : sessionName(parent);
      parts.push(h(doc, "span", { "data-role": "fork-of" }, [t("forkOf", { name })]));
    }
    if (typeof session.live === "boolean") {
      const badge = session.live ? "live" : "cold";
      parts.push(
        h(doc, "span", {
          class: `badge badge-${badge}`,
          "data-badge": badge,
          title: t(session.live ? "openHint" : "closedHint"),
        }, [t(session.live ? "open" : "closed")]),
      );
    }
    return parts.flatMap((part, index) => (index === 0 ? [part] : [" · ", part]));
  }

  /** The unread count (public hook `[data-role=unread]`): empty and hidden at 0. */
  #unread(session) {
    const { t, unread } = this.#state;
    const count = Math.max(0, Number(unread(session)) || 0);
    const attrs = { class: "unread", "data-role": "unread" };
    if (count === 0) return h(this.#doc, "span", { ...attrs, hidden: true });
    const label = count === 1 ? t("unreadOne") : t("unreadCount", { n: count });
    return h(this.#doc, "span", { ...attrs, "aria-label": label, title: label }, [String(count)]);
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
