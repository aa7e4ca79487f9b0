// The application shell: builds the page (sidebar, transcript, composer),
// wires the API, the session window, the conversation view, the pending
// messages and the language switch. Everything it touches is injected, so a
// node test can mount it on a fake DOM.

import { ConversationView } from "./conversation.js";
import { h } from "./dom.js";
import { initialLang, saveLang, translator } from "./i18n.js";
import { PendingMessages } from "./pending.js";
import { loadClientModules } from "./plugins.js";
import { createRegistry } from "./registry.js";
import { renderSessionList, shortId } from "./session-list.js";
import { SessionWindow } from "./session-window.js";
import { toNodes } from "./transcript.js";

/** Pixels from the bottom within which new content keeps the view pinned. */
const STICKY_BOTTOM = 80;

/**
 * Mount the client in `root`.
 *
 * Options: `document`, `root`, `api` (from createApi, or null without a
 * token), `openLive(sessionId, handlers)`, `storage` (localStorage for the
 * language), `navigatorLanguages`, `importModule(url)`, `timers`,
 * `schedule(fn)` (coalesces renders; default requestAnimationFrame),
 * `initialSession`, `onNavigate(id)`, `onError(err)`.
 *
 * Returns a controller: `start()`, `openSession(id)`, `newSession()`,
 * `forkAt(seq)`, `send(text?)`, `setLang(lang)`, `refreshSessions()`,
 * `currentWindow()`, `registry`, `destroy()`.
 */
export function mountApp({
  document,
  root,
  api,
  openLive,
  storage = null,
  navigatorLanguages = [],
  importModule,
  timers = globalThis,
  schedule = defaultSchedule,
  initialSession = null,
  onNavigate = () => {},
  onError = (err) => globalThis.console?.error(err),
}) {
  let lang = initialLang(storage, navigatorLanguages);
  let t = translator(lang);
  let sessions = [];
  let current = null;
  let renderQueued = false;
  let banner = null;
  const labels = [];

  const registry = createRegistry({ lang: () => lang });
  const ui = buildLayout(document, root, labels);

  const conversation = new ConversationView({
    document,
    root: ui.transcript,
    registry,
    onFork: (seq) => forkAt(seq),
    onLoadOlder: () => current?.window.loadOlder(),
    onDismissPending: (id) => {
      current?.pending.dismiss(id);
      requestRender();
    },
    onRenderError: (err) => onError(err),
  });

  ui.newSession.addEventListener("click", () => newSession());
  ui.menu.addEventListener("click", () => setSidebar(true));
  ui.closeMenu.addEventListener("click", () => setSidebar(false));
  ui.scrim.addEventListener("click", () => setSidebar(false));
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });
  ui.composer.addEventListener("keydown", (event) => {
    // Enter sends; Shift+Enter is a newline; Enter that confirms an IME
    // composition (typing 中文) must not send.
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) {
      return;
    }
    event.preventDefault();
    send();
  });
  ui.composer.addEventListener("input", () => autoGrow(ui.composer));
  for (const button of ui.langButtons) {
    button.addEventListener("click", () => setLang(button.getAttribute("data-lang")));
  }

  applyLang();

  // ---- actions --------------------------------------------------------

  async function start() {
    if (api === null) {
      showBanner(() => t("noToken"));
      requestRender();
      return;
    }
    await loadPlugins();
    await refreshSessions();
    if (initialSession) await openSession(initialSession);
    requestRender();
  }

  async function loadPlugins() {
    try {
      const modules = await api.clientModules();
      const results = await loadClientModules({ modules, registry, importModule });
      for (const result of results) if (!result.ok) onError(result.error);
    } catch (err) {
      report(err);
    }
  }

  async function refreshSessions() {
    if (api === null) return;
    try {
      sessions = await api.listSessions();
      renderSessions();
    } catch (err) {
      report(err);
    }
  }

  async function openSession(id) {
    if (!id || current?.id === id) return;
    closeCurrent();
    const pending = new PendingMessages();
    current = { id, window: null, pending, unsubscribe: () => {}, lastStatus: null };
    const opening = current;
    setSidebar(false);
    renderSessions();
    onNavigate(id);
    let live = sessions.find((session) => session.id === id)?.live ?? true;
    try {
      live = Boolean((await api.getSession(id)).live);
    } catch (err) {
      if (current !== opening) return;
      report(err);
      if (err?.status === 404) {
        closeCurrent();
        onNavigate(null);
        requestRender();
        return;
      }
    }
    if (current !== opening) return;
    const sessionWindow = new SessionWindow({
      fetchEvents: (params) => api.events(id, params),
      openLive: (handlers) => openLive(id, handlers),
      live,
      timers,
    });
    opening.window = sessionWindow;
    opening.unsubscribe = sessionWindow.subscribe(() => requestRender());
    sessionWindow.start();
    clearBanner();
    requestRender();
  }

  function closeCurrent() {
    if (current === null) return;
    current.unsubscribe();
    current.window?.close();
    current = null;
    ui.title.textContent = "";
  }

  async function newSession() {
    if (api === null) return null;
    try {
      const session = await api.createSession();
      sessions = [session, ...sessions.filter((item) => item.id !== session.id)];
      await openSession(session.id);
      refreshSessions();
      return session.id;
    } catch (err) {
      report(err);
      return null;
    }
  }

  /** Fork the current Session just after `seq` and open the child. */
  async function forkAt(seq) {
    if (api === null || current === null) return null;
    try {
      const child = await api.fork(current.id, seq + 1);
      sessions = [child, ...sessions.filter((item) => item.id !== child.id)];
      await openSession(child.id);
      refreshSessions();
      return child.id;
    } catch (err) {
      report(err);
      return null;
    }
  }

  async function send(text = ui.composer.value) {
    if (api === null || text.trim() === "") return;
    if (current === null && (await newSession()) === null) return;
    const target = current;
    if (target.window === null) return;
    const id = target.pending.add(text, target.window.hi);
    if (text === ui.composer.value) {
      ui.composer.value = "";
      autoGrow(ui.composer);
    }
    requestRender();
    try {
      await api.sendMessage(target.id, text);
      target.pending.queued(id);
      // A message resumes a cold Session: follow it live from now on.
      target.window.setLive(true);
      refreshSessions();
    } catch (err) {
      target.pending.failed(id, err?.message ?? String(err));
    }
    requestRender();
  }

  function setLang(next) {
    lang = saveLang(storage, next);
    t = translator(lang);
    applyLang();
  }

  function destroy() {
    closeCurrent();
    root.replaceChildren();
  }

  // ---- rendering ------------------------------------------------------

  function applyLang() {
    root.setAttribute("lang", lang);
    if (document.documentElement) document.documentElement.setAttribute("lang", lang);
    for (const { element, key, attr } of labels) {
      if (attr) element.setAttribute(attr, t(key));
      else element.textContent = t(key);
    }
    for (const button of ui.langButtons) {
      const active = button.getAttribute("data-lang") === lang;
      button.setAttribute("aria-pressed", active ? "true" : "false");
    }
    if (banner !== null) ui.banner.textContent = banner.text();
    renderSessions();
    requestRender();
  }

  function renderSessions() {
    renderSessionList({
      document,
      list: ui.sessionList,
      sessions,
      currentId: current?.id ?? null,
      t,
      lang,
      onOpen: (id) => openSession(id),
    });
  }

  function requestRender() {
    if (renderQueued) return;
    renderQueued = true;
    schedule(() => {
      renderQueued = false;
      renderTranscript();
    });
  }

  function renderTranscript() {
    const snap = current?.window?.snapshot() ?? null;
    const scroll = measureScroll(ui.transcript);
    const previousLo = ui.transcript.getAttribute("data-lo");
    ui.title.textContent = current === null ? "" : shortId(current.id);
    if (current === null) ui.title.removeAttribute("title");
    else ui.title.setAttribute("title", current.id);
    renderStatus(snap);
    if (snap === null) {
      conversation.render({ nodes: [], lang, notice: current === null ? t("pickSession") : "" });
      return;
    }
    // Recovering from a reconnect may mean the host restarted: badges are stale.
    if (current.lastStatus === "reconnecting" && snap.status === "live") refreshSessions();
    current.lastStatus = snap.status;
    syncSummary(current.id, snap);
    current.pending.reconcile(snap.events);
    const nodes = toNodes(snap.events, snap.views);
    const pending = current.pending.list();
    let notice = "";
    if (!snap.live && snap.loaded) notice = t("coldNotice");
    else if (snap.loaded && nodes.length === 0 && pending.length === 0) notice = t("emptyTranscript");
    conversation.render({
      nodes,
      pending,
      streaming: snap.streaming,
      reasoning: snap.reasoning,
      lang,
      hasOlder: snap.hasOlder,
      loadingOlder: snap.loadingOlder,
      notice,
    });
    ui.transcript.setAttribute("data-lo", String(snap.lo));
    ui.transcript.setAttribute("data-status", snap.status);
    restoreScroll(ui.transcript, scroll, previousLo !== null && Number(previousLo) > snap.lo);
  }

  /**
   * Keep the sidebar's event count of the open Session in step with its
   * window. The live/cold badge comes only from the host's list: following
   * the stream does not make a Session live.
   */
  function syncSummary(id, snap) {
    const summary = sessions.find((session) => session.id === id);
    if (summary === undefined || !snap.loaded) return;
    const length = Math.max(summary.length ?? 0, snap.hi);
    if (summary.length === length) return;
    sessions = sessions.map((session) => (session.id === id ? { ...session, length } : session));
    renderSessions();
  }

  function renderStatus(snap) {
    const status = snap?.status ?? "idle";
    const text = {
      connecting: t("connecting"),
      reconnecting: t("reconnecting"),
      failed: t("failedStatus", { message: snap?.error?.message ?? "" }),
    }[status];
    ui.status.textContent = text ?? "";
    ui.status.setAttribute("data-state", status);
    if (text === undefined) ui.status.setAttribute("hidden", "");
    else ui.status.removeAttribute("hidden");
  }

  function setSidebar(open) {
    root.setAttribute("data-sidebar", open ? "open" : "closed");
  }

  function report(err) {
    onError(err);
    const key = err?.status === 401 ? "unauthorized" : "error";
    showBanner(() => t(key, { message: err?.message ?? String(err) }));
  }

  function showBanner(text) {
    banner = { text };
    ui.banner.textContent = banner.text();
    ui.banner.removeAttribute("hidden");
  }

  function clearBanner() {
    banner = null;
    ui.banner.textContent = "";
    ui.banner.setAttribute("hidden", "");
  }

  return Object.freeze({
    start,
    openSession,
    newSession,
    forkAt,
    send,
    setLang,
    refreshSessions,
    destroy,
    registry,
    currentWindow: () => current?.window ?? null,
    currentId: () => current?.id ?? null,
    lang: () => lang,
  });
}

/** Build the static layout; `labels` collects elements whose text is translated. */
function buildLayout(document, root, labels) {
  const label = (element, key, attr) => {
    labels.push({ element, key, attr });
    return element;
  };
  const button = (attrs, key) => label(h(document, "button", { type: "button", ...attrs }), key);

  const newSession = button({ class: "primary new-session", "data-role": "new-session" }, "newSession");
  const closeMenu = button({ class: "icon close-menu", "data-role": "close-menu" }, "closeMenu");
  const sessionList = h(document, "ul", { class: "session-list", "data-role": "session-list" });
  label(sessionList, "sessions", "aria-label");
  const langButtons = [
    h(document, "button", { type: "button", class: "lang", "data-lang": "en", lang: "en" }, ["English"]),
    h(document, "button", { type: "button", class: "lang", "data-lang": "zh", lang: "zh" }, ["中文"]),
  ];
  const langGroup = h(document, "div", { class: "lang-switch", role: "group", "data-role": "lang" }, langButtons);
  label(langGroup, "language", "aria-label");

  const sidebar = h(document, "aside", { class: "sidebar", "data-role": "sidebar" }, [
    h(document, "div", { class: "sidebar-head" }, [
      h(document, "span", { class: "brand" }, ["dsh"]),
      closeMenu,
    ]),
    newSession,
    label(h(document, "h2", { class: "sidebar-title" }), "sessions"),
    sessionList,
    h(document, "div", { class: "sidebar-foot" }, [langGroup]),
  ]);
  const scrim = h(document, "div", { class: "scrim", "data-role": "scrim" });

  const menu = h(document, "button", { type: "button", class: "icon menu", "data-role": "menu" }, ["☰"]);
  label(menu, "menu", "aria-label");
  const title = h(document, "div", { class: "title", "data-role": "title" });
  const status = h(document, "span", { class: "status", "data-role": "status", role: "status", hidden: true });
  const banner = h(document, "div", { class: "banner", "data-role": "banner", role: "alert", hidden: true });
  const transcript = h(document, "div", {
    class: "transcript",
    "data-role": "transcript",
    "aria-live": "polite",
  });
  const composer = h(document, "textarea", { class: "composer", "data-role": "composer", rows: 1 });
  label(composer, "composerPlaceholder", "placeholder");
  label(composer, "composerHint", "title");
  const send = label(h(document, "button", { type: "submit", class: "primary send", "data-role": "send" }), "send");
  const form = h(document, "form", { class: "composer-bar", "data-role": "composer-form" }, [composer, send]);

  const main = h(document, "main", { class: "main" }, [
    h(document, "header", { class: "topbar" }, [menu, title, status]),
    banner,
    transcript,
    form,
  ]);

  root.setAttribute("data-sidebar", "closed");
  root.replaceChildren(sidebar, scrim, main);
  return {
    newSession,
    closeMenu,
    sessionList,
    langButtons,
    scrim,
    menu,
    title,
    status,
    banner,
    transcript,
    composer,
    send,
    form,
  };
}

function measureScroll(element) {
  const { scrollTop, scrollHeight, clientHeight } = element;
  if (![scrollTop, scrollHeight, clientHeight].every(Number.isFinite)) return null;
  return { scrollTop, scrollHeight, nearBottom: scrollHeight - scrollTop - clientHeight < STICKY_BOTTOM };
}

function restoreScroll(element, before, prepended) {
  if (before === null || !Number.isFinite(element.scrollHeight)) return;
  if (prepended) element.scrollTop = before.scrollTop + (element.scrollHeight - before.scrollHeight);
  else if (before.nearBottom) element.scrollTop = element.scrollHeight;
}

function autoGrow(textarea) {
  const style = textarea.style;
  if (!style || !Number.isFinite(textarea.scrollHeight)) return;
  style.height = "auto";
  style.height = `${Math.min(textarea.scrollHeight, 200)}px`;
}

function defaultSchedule(fn) {
  if (typeof globalThis.requestAnimationFrame === "function") globalThis.requestAnimationFrame(fn);
  else queueMicrotask(fn);
}
