// Keyboard shortcuts of the page, and the list the help dialog shows.
// Ctrl and ⌘ are the same modifier here, so each works on every platform.
// F2 and Delete are heard by the conversation list itself (session-list.js,
// on its focused entry); they are listed here so the help names them.

/** The shortcuts, in the order the help dialog lists them; `keys` per platform. */
export const SHORTCUTS = Object.freeze([
  { action: "search", keys: (mac) => [mac ? "⌘" : "Ctrl", "K"] },
  { action: "new-session", keys: (mac) => [mac ? "⌘" : "Ctrl", "Shift", "O"] },
  { action: "focus-composer", keys: () => ["/"] },
  { action: "send", keys: () => ["Enter"] },
  { action: "newline", keys: () => ["Shift", "Enter"] },
  { action: "rename", keys: () => ["F2"] },
  { action: "delete", keys: () => ["Delete"] },
  { action: "help", keys: () => ["?"] },
  { action: "escape", keys: () => ["Esc"] },
]);

/** Which shortcut `event` (a keydown) is, or null. */
export function shortcutFor(event) {
  if (event.isComposing || event.keyCode === 229) return null;
  const mod = Boolean(event.ctrlKey || event.metaKey);
  const key = typeof event.key === "string" ? event.key : "";
  if (event.altKey) return null;
  if (mod && !event.shiftKey && key.toLowerCase() === "k") return "search";
  if (mod && event.shiftKey && key.toLowerCase() === "o") return "new-session";
  if (mod) return null;
  if (key === "/") return "focus-composer";
  if (key === "?") return "help";
  if (key === "Escape") return "escape";
  return null;
}

/** True when typing into `target` must not be taken over by a one-key shortcut. */
export function isEditable(target) {
  if (target === null || typeof target !== "object" || typeof target.closest !== "function") return false;
  return target.closest("input, textarea, select, [contenteditable]") !== null;
}

/**
 * Listen for shortcuts on `target` (the document). `handlers[action](event)`
 * runs for each; returning false means "not handled" (the key keeps its
 * default). One-key shortcuts are ignored while typing in a field. Returns
 * the function that removes the listener.
 */
export function installShortcuts({ target, handlers }) {
  const listener = (event) => {
    const action = shortcutFor(event);
    if (action === null || typeof handlers[action] !== "function") return;
    if ((action === "focus-composer" || action === "help") && isEditable(event.target)) return;
    if (handlers[action](event) !== false) event.preventDefault();
  };
  target.addEventListener("keydown", listener);
  return () => target.removeEventListener("keydown", listener);
}

/** Whether the reader is on an Apple platform (⌘ rather than Ctrl in labels). */
export function isMac(navigator = globalThis.navigator) {
  const platform = navigator?.userAgentData?.platform ?? navigator?.platform ?? "";
  return /mac|iphone|ipad|ipod/i.test(String(platform));
}
