// The page entry point: reads the token, builds the API client and the
// WebSocket transports (a Session's stream, every Session's alerts), applies the theme, mounts the shell on [data-role=app] and
// follows the URL hash (#/s/<session id>; a notification opens ?session=<id>:
// session-url.js). The only module that touches browser globals at load.

import { createApi } from "./api.js";
import { copyText } from "./clipboard.js";
import { openWebSocket } from "./live.js";
import { LIST_POLL_MS, mountApp } from "./shell.js";
import { isMac } from "./shortcuts.js";
import { createTheme } from "./theme.js";
import { readerZone } from "./time.js";
import { sessionFromHash, takeSessionFromUrl } from "./session-url.js";
import { keepToken, takeToken } from "./token.js";

function storageOrNull(name) {
  try {
    return window[name] ?? null;
  } catch {
    // Disabled storage throws on access (sandboxed frames, strict privacy modes).
    return null;
  }
}

const localStorage = storageOrNull("localStorage");
const token = takeToken({
  location: window.location,
  history: window.history,
  storage: localStorage,
  legacy: storageOrNull("sessionStorage"),
});
// Without a token the page still mounts: its prompt takes the printed address.
const api = createApi({ token: token ?? "", fetch: window.fetch.bind(window) });
const theme = createTheme({
  root: document.documentElement,
  storage: localStorage,
  matchMedia: typeof window.matchMedia === "function" ? window.matchMedia.bind(window) : null,
});

const controller = mountApp({
  document,
  root: document.querySelector("[data-role=app]"),
  api,
  openLive: (sessionId, handlers) => openWebSocket({ url: api.liveUrl(sessionId), ...handlers }),
  openEverywhere: (since, handlers) => openWebSocket({ url: api.everywhereUrl(since), ...handlers }),
  storage: localStorage,
  navigatorLanguages: navigator.languages ?? [navigator.language],
  importModule: (url) => import(url),
  timers: window,
  timeZone: readerZone(),
  copyText: (text) => copyText(text),
  theme,
  mac: isMac(navigator),
  Notification: typeof window.Notification === "function" ? window.Notification : null,
  createAudio: () => {
    const Context = window.AudioContext ?? window.webkitAudioContext;
    return typeof Context === "function" ? new Context() : null;
  },
  focusWindow: () => window.focus(),
  matchMedia: typeof window.matchMedia === "function" ? window.matchMedia.bind(window) : null,
  saveToken: (value) => keepToken(localStorage, value),
  origin: window.location.origin,
  initialSession: takeSessionFromUrl({ location: window.location, history: window.history }),
  onNavigate: (id) => {
    const base = `${window.location.pathname}${window.location.search}`;
    const next = id ? `${base}#/s/${encodeURIComponent(id)}` : base;
    window.history.replaceState(window.history.state, "", next);
  },
});

window.addEventListener("hashchange", () => {
  const id = sessionFromHash(window.location.hash);
  if (id !== null) controller.openSession(id);
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) {
    controller.refreshSessions({ background: true });
    controller.looked();
  }
});
window.addEventListener("focus", () => controller.looked());
// A Session restored or deleted where this host cannot tell the page (the CLI
// in another process, another host of a shared store) shows up here: the list
// is read again when the tab is shown (above) and every LIST_POLL_MS while it
// is visible. A hidden tab asks nothing.
setInterval(() => {
  if (!document.hidden) controller.refreshSessions({ background: true });
}, LIST_POLL_MS);
controller.start();
