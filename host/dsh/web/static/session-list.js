// The sidebar list of Sessions: newest first, a live/cold badge, the fork
// lineage, the current one marked.

import { h } from "./dom.js";

/** Sessions sorted newest first (by createdAt, then id for a stable order). */
export function sortSessions(sessions) {
  return [...sessions].sort(
    (a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0) || String(a.id).localeCompare(String(b.id)),
  );
}

/**
 * Replace the children of `list` (the `[data-role=session-list]` element)
 * with one item per Session. `onOpen(id)` is called when one is picked.
 */
export function renderSessionList({ document, list, sessions, currentId, t, lang, onOpen }) {
  const items = sortSessions(sessions).map((session) => {
    const current = session.id === currentId;
    const badge = session.live ? "live" : "cold";
    const count = session.length ?? 0;
    const meta = [formatTime(session.createdAt, lang), count === 1 ? t("oneEvent") : t("events", { n: count })];
    if (session.lineage?.parentId) meta.push(t("forkOf", { id: shortId(session.lineage.parentId) }));
    const button = h(document, "button", {
      type: "button",
      class: current ? "session current" : "session",
      "data-session-id": session.id,
      "aria-current": current ? "true" : undefined,
      title: session.id,
    }, [
      h(document, "span", { class: "session-line" }, [
        h(document, "span", { class: "session-id" }, [shortId(session.id)]),
        h(document, "span", { class: `badge badge-${badge}`, "data-badge": badge }, [t(badge)]),
      ]),
      h(document, "span", { class: "session-meta" }, [meta.join(" · ")]),
    ]);
    button.addEventListener("click", () => onOpen(session.id));
    return h(document, "li", {}, [button]);
  });
  if (items.length === 0) {
    items.push(h(document, "li", { class: "empty" }, [t("noSessions")]));
  }
  list.replaceChildren(...items);
}

/** Ids are long; the first 12 characters tell them apart in a list. */
export function shortId(id) {
  const text = String(id);
  return text.length > 14 ? `${text.slice(0, 12)}…` : text;
}

function formatTime(ms, lang) {
  if (!Number.isFinite(ms)) return "";
  return new Date(ms).toLocaleString(lang === "zh" ? "zh-CN" : undefined, {
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  });
}
