// Modal dialogs: a confirmation (delete a Session) and the keyboard help.
// A native <dialog> opened with showModal() (the rest of the page is inert,
// Esc closes it); focus moves into it and returns where it was on close.

import { h } from "./dom.js";
import { SHORTCUTS } from "./shortcuts.js";

/**
 * Open a dialog in `host` (the app root) and resolve to the value of the
 * action chosen, or null when it was dismissed (Esc, a click outside, the
 * close button). `body` is a list of nodes or strings; each action is
 * `{label, value, primary?, danger?}`; the first primary one gets focus.
 */
export function openDialog({ document, host, role, title, body = [], actions, closeLabel }) {
  const returnFocus = document.activeElement ?? null;
  const findAgain = sameControl(document, returnFocus);
  const heading = h(document, "h2", { class: "dialog-title", id: `${role}-title` }, [title]);
  const buttons = actions.map((action) =>
    h(document, "button", {
      type: "button",
      class: ["dialog-action", action.primary ? "primary" : "", action.danger ? "danger" : ""].filter(Boolean).join(" "),
      "data-value": String(action.value),
    }, [action.label]),
  );
  const close = h(document, "button", { type: "button", class: "icon dialog-close", "data-action": "close", "aria-label": closeLabel }, ["×"]);
  const panel = h(document, "div", { class: "dialog-panel" }, [
    h(document, "div", { class: "dialog-head" }, [heading, close]),
    h(document, "div", { class: "dialog-body" }, body),
    h(document, "div", { class: "dialog-actions" }, buttons),
  ]);
  const dialog = h(document, "dialog", { class: "dialog", "data-role": role, "aria-labelledby": `${role}-title` }, [panel]);
  host.appendChild(dialog);

  return new Promise((resolve) => {
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      if (dialog.hasAttribute("open")) dialog.close?.();
      dialog.remove();
      // The list may have been redrawn meanwhile (another tab, the host): the same
      // control of the same row then stands where the old one was.
      const target = returnFocus?.isConnected ? returnFocus : findAgain();
      target?.focus?.();
      resolve(value);
    };
    buttons.forEach((button, index) => button.addEventListener("click", () => finish(actions[index].value)));
    close.addEventListener("click", () => finish(null));
    // The native dialog turns Esc into "cancel"; the keydown covers the rest.
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault?.();
      finish(null);
    });
    dialog.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault?.();
      event.stopPropagation?.();
      finish(null);
    });
    // A click on the backdrop lands on the <dialog> itself, outside the panel.
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) finish(null);
    });
    dialog.addEventListener("close", () => finish(null));
    if (typeof dialog.showModal === "function") dialog.showModal();
    else dialog.setAttribute("open", "");
    (buttons[actions.findIndex((action) => action.primary)] ?? buttons[0] ?? close).focus?.();
  });
}

/**
 * How to find `element` again if it is redrawn while a dialog is open: the control
 * with its `data-action` in the row with its `data-session-id` (ids are plain
 * `[A-Za-z0-9_-]`, so they need no escaping in a selector); nothing otherwise.
 */
function sameControl(document, element) {
  const row = element?.closest?.("[data-session-id]");
  const action = element?.getAttribute?.("data-action");
  const id = row?.getAttribute?.("data-session-id");
  if (!action || !id || !/^[A-Za-z0-9_-]+$/.test(id)) return () => null;
  return () => document.querySelector?.(`[data-session-id="${id}"] [data-action="${action}"]`) ?? null;
}

/** The command that brings a deleted Session back (typed, so never translated). */
export const RESTORE_COMMAND = "dsh sessions restore";

/**
 * How many pending reminders a Session has, from the best the page knows:
 * `states` (the open Session's full plugin states, `{plugin: {reminders:
 * [...]}}`) else `summary.plugins` (the list's compact `{plugin:
 * {reminders: N}}`). Null when no plugin says — the page then says nothing
 * about reminders rather than guess.
 */
export function pendingReminders({ states = null, summary = null } = {}) {
  let total = null;
  const add = (n) => {
    total = (total ?? 0) + n;
  };
  const count = (plugins, full) => {
    if (plugins === null || typeof plugins !== "object") return;
    for (const state of Object.values(plugins)) {
      const reminders = state?.reminders;
      if (full && Array.isArray(reminders)) add(reminders.length);
      else if (!full && Number.isSafeInteger(reminders) && reminders >= 0) add(reminders);
    }
  };
  count(states, true);
  if (total === null) count(summary?.plugins ?? null, false);
  return total;
}

/**
 * `text` with its `{command}` placeholder as a <code> element: text nodes
 * only, so nothing in the words or the command is ever read as markup.
 */
function withCode(document, text, command) {
  const [before, ...rest] = text.split("{command}");
  const parts = [before];
  for (const after of rest) parts.push(h(document, "code", {}, [command]), after);
  return parts.filter((part) => part !== "");
}

/**
 * Ask before deleting the Session `id` called `name`; resolves to true to
 * delete. Says what stops (`reminders` pending, when known: a count or null)
 * and how to bring it back (the restore command, as code).
 */
export async function confirmDelete({ document, host, t, name, id = "ID", reminders = null }) {
  const body = [h(document, "p", {}, [t("deleteQuestion", { name })])];
  if (Number.isSafeInteger(reminders) && reminders > 0) {
    const stops = reminders === 1 ? t("deleteStopsOne") : t("deleteStops", { n: reminders });
    body.push(h(document, "p", { "data-role": "delete-stops" }, [stops]));
  }
  body.push(h(document, "p", { class: "hint" }, withCode(document, t("deleteHint"), `${RESTORE_COMMAND} ${id}`)));
  const value = await openDialog({
    document,
    host,
    role: "confirm-delete",
    title: t("deleteTitle"),
    body,
    actions: [
      { label: t("cancel"), value: "cancel" },
      { label: t("delete"), value: "delete", primary: true, danger: true },
    ],
    closeLabel: t("closeDialog"),
  });
  return value === "delete";
}

/** The keyboard shortcuts, listed. */
export function showHelp({ document, host, t, mac }) {
  const rows = SHORTCUTS.map(({ action, keys }) =>
    h(document, "tr", { "data-shortcut": action }, [
      h(document, "td", { class: "keys" }, keys(mac).flatMap((key, index) => [
        index > 0 ? " + " : null,
        h(document, "kbd", {}, [key]),
      ])),
      h(document, "td", {}, [t(`shortcut.${action}`)]),
    ]),
  );
  return openDialog({
    document,
    host,
    role: "help",
    title: t("helpTitle"),
    body: [h(document, "table", { class: "shortcuts" }, [h(document, "tbody", {}, rows)])],
    actions: [{ label: t("close"), value: "close", primary: true }],
    closeLabel: t("closeDialog"),
  });
}
