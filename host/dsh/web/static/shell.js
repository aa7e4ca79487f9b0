// The application shell: composes the page's components (sidebar, header,
// banner, transcript with its follower and announcer, composer, dialogs),
// holds the state they share (the Session list, the open Session's window
// and pending messages, language, theme) and runs the reader's actions
// against the API. Everything it touches is injected, so a node test can
// mount it on a fake DOM.

import { createAnnouncer } from "./announcer.js";
import { isUnsupported } from "./api.js";
import { createBanner } from "./banner.js";
import { createComposer } from "./composer.js";
import { ConversationView } from "./conversation.js";
import { confirmDelete, showHelp } from "./dialogs.js";
import { h } from "./dom.js";
import { createFollower } from "./follow.js";
import { createHeader } from "./header.js";
import { Labels, initialLang, saveLang, translator } from "./i18n.js";
import { announcement } from "./messages.js";
import { PendingMessages, describeError } from "./pending.js";
import { loadClientModules } from "./plugins.js";
import { createRegistry } from "./registry.js";
import { sessionName, shortId } from "./session-list.js";
import { SessionWindow } from "./session-window.js";
import { installShortcuts } from "./shortcuts.js";
import { createSidebar } from "./sidebar.js";
import { createTimeFormat, localeFor } from "./time.js";
import { latestTitle, toNodes, turnRunning } from "./transcript.js";

/**
 * Mount the client in `root`.
 *
 * Options: `document`, `root`, `api` (from createApi, or null without a
 * token), `openLive(sessionId, handlers)`, `storage` (localStorage for the
 * language), `navigatorLanguages`, `importModule(url)`, `timers`,
 * `schedule(fn)` (coalesces renders; default requestAnimationFrame),
 * `initialSession`, `onNavigate(id)`, `onError(err)`, `timeZone` (the
 * reader's IANA zone: times are shown in it and sent with each message),
 * `now()`, `copyText(text)`, `theme` (from createTheme, optional), `mac`
 * (label shortcuts with ⌘), `keyTarget` (where shortcuts are heard;
 * default `document`).
 *
 * Returns a controller: `start()`, `openSession(id)`, `newSession()`,
 * `forkAt(seq)`, `send(text?)`, `stop()`, `renameSession(id, title)`,
 * `deleteSession(id)`, `search(query)`, `setLang(lang)`, `refreshSessions()`,
 * `currentWindow()`, `currentId()`, `lang()`, `registry`, `destroy()`.
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
  timeZone = undefined,
  now = () => Date.now(),
  copyText = async () => false,
  theme = null,
  mac = false,
  keyTarget = document,
}) {
  let lang = initialLang(storage, navigatorLanguages);
  let t = translator(lang);
  let time = timeFormat();
  let sessions = [];
  let query = "";
  let listRequest = 0;
  let current = null;
  let renderQueued = false;
  let destroyed = false;
  const titles = new Map();
  const labels = new Labels();
  const registry = createRegistry({ lang: () => lang });

  // ---- components -------------------------------------------------------

  const sidebar = createSidebar({
    document,
    labels,
    timers,
    handlers: {
      onNewSession: () => newSession(),
      onSearch: (text) => search(text),
      onOpen: (id) => openSession(id),
      onRename: (id, title) => renameSession(id, title),
      onDelete: (id) => deleteSession(id),
      onLang: (next) => setLang(next),
      onTheme: () => theme?.toggle(),
      onHelp: () => help(),
      onClose: () => closeDrawer(true),
    },
  });
  const header = createHeader({ document, labels, onMenu: () => openDrawer() });
  const banner = createBanner(document);
  const transcript = h(document, "div", { class: "transcript", "data-role": "transcript" });
  labels.attr(transcript, "aria-label", "conversation");
  const follower = createFollower({ document, labels, scroller: transcript });
  const announcer = createAnnouncer(document);
  const composer = createComposer({ document, labels, onSend: (text) => send(text), onStop: () => stop() });
  const conversation = new ConversationView({
    document,
    root: transcript,
    registry,
    timers,
    copyText,
    onFork: (seq) => forkAt(seq),
    onLoadOlder: () => current?.window?.loadOlder(),
    onPending: (action, id) => pendingAction(action, id),
    onRenderError: (err) => onError(err),
  });
  const scrim = h(document, "div", { class: "scrim", "data-role": "scrim" });
  scrim.addEventListener("click", () => closeDrawer(false));
  const main = h(document, "main", { class: "main" }, [
    header.element,
    banner.element,
    h(document, "div", { class: "transcript-frame" }, [transcript, follower.pill]),
    composer.element,
    announcer.element,
  ]);
  root.setAttribute("data-sidebar", "closed");
  root.replaceChildren(sidebar.element, scrim, main);

  const removeShortcuts = installShortcuts({
    target: keyTarget,
    handlers: {
      search: () => {
        openDrawer(false);
        sidebar.search.focus?.();
        sidebar.search.select?.();
      },
      "new-session": () => {
        newSession();
      },
      "focus-composer": () => composer.focus(),
      help: () => {
        help();
      },
      escape: () => {
        if (root.getAttribute("data-sidebar") !== "open") return false;
        closeDrawer(true);
        return true;
      },
    },
  });
  const unsubscribeTheme = theme?.subscribe((effective) => sidebar.setTheme(effective)) ?? (() => {});
  sidebar.setTheme(theme?.effective() ?? "light");
  applyLang();

  // ---- sessions ---------------------------------------------------------

  async function start() {
    if (api === null) {
      banner.show(() => t("noToken"));
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
    listRequest += 1;
    const asked = listRequest;
    const text = query;
    try {
      let listed = await api.listSessions(text === "" ? {} : { q: text });
      if (asked !== listRequest) return;
      // A host without titles cannot search them: narrow its answer by id.
      if (text !== "" && !listed.some((session) => Object.hasOwn(session, "title"))) {
        listed = listed.filter((session) => String(session.id).toLowerCase().includes(text.toLowerCase()));
      }
      sessions = listed;
      for (const session of sessions) if (typeof session.title === "string") titles.set(session.id, session.title);
      renderSessions();
      requestRender();
    } catch (err) {
      if (asked === listRequest) report(err);
    }
  }

  function search(text) {
    query = String(text ?? "").trim();
    return refreshSessions();
  }

  async function openSession(id) {
    if (!id || current?.id === id) return;
    closeCurrent();
    const opening = {
      id,
      window: null,
      pending: new PendingMessages(),
      unsubscribe: () => {},
      lastStatus: null,
      lastSeq: null,
      announcedHi: null,
      stopping: false,
    };
    current = opening;
    closeDrawer(false);
    follower.reset();
    announcer.clear();
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
    banner.clear();
    requestRender();
  }

  function closeCurrent() {
    if (current === null) return;
    current.unsubscribe();
    current.window?.close();
    current = null;
  }

  async function newSession() {
    if (api === null) return null;
    try {
      const session = await api.createSession();
      sessions = [session, ...sessions.filter((item) => item.id !== session.id)];
      await openSession(session.id);
      composer.focus();
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

  async function renameSession(id, title) {
    if (api === null) return false;
    try {
      const summary = await api.renameSession(id, title);
      const named = typeof summary?.title === "string" ? summary.title : title;
      titles.set(id, named);
      sessions = sessions.map((session) => (session.id === id ? { ...session, ...summary, title: named } : session));
      renderSessions();
      requestRender();
      return true;
    } catch (err) {
      if (isUnsupported(err)) unsupported("featureRename", err);
      else report(err);
      return false;
    }
  }

  async function deleteSession(id) {
    if (api === null) return false;
    const summary = sessions.find((session) => session.id === id) ?? { id, title: titles.get(id) };
    const confirmed = await confirmDelete({ document, host: root, t, name: sessionName(summary) });
    if (!confirmed) return false;
    try {
      await api.deleteSession(id);
    } catch (err) {
      if (isUnsupported(err)) unsupported("featureDelete", err);
      else report(err);
      return false;
    }
    sessions = sessions.filter((session) => session.id !== id);
    titles.delete(id);
    if (current?.id === id) {
      closeCurrent();
      onNavigate(null);
    }
    renderSessions();
    requestRender();
    refreshSessions();
    return true;
  }

  // ---- messages ---------------------------------------------------------

  async function send(text = composer.value) {
    if (api === null || typeof text !== "string" || text.trim() === "") return;
    if (current === null && (await newSession()) === null) return;
    const target = current;
    if (target.window === null) return;
    const id = target.pending.add(text, target.window.hi);
    if (text === composer.value) composer.value = "";
    follower.stick();
    requestRender();
    await post(target, id, text);
  }

  async function post(target, id, text) {
    try {
      const answer = await api.sendMessage(target.id, text, { timeZone });
      target.pending.queued(id, answer?.session?.length ?? null);
      // A message resumes a cold Session: follow it live from now on, and
      // do not wait for the reconnect backoff if the stream is down.
      target.window.setLive(true);
      if (target.window.status === "reconnecting") target.window.resync();
      refreshSessions();
    } catch (err) {
      const network = err?.status === 0;
      const doubt = network || err?.status >= 500;
      target.pending.failed(id, network ? t("offline") : (err?.message ?? String(err)), doubt ? "error" : "rejected");
    }
    requestRender();
  }

  function pendingAction(action, id) {
    const target = current;
    if (target === null || target.window === null) return;
    if (action === "retry") {
      const text = target.pending.retry(id, target.window.hi);
      if (text === null) return;
      follower.stick();
      requestRender();
      post(target, id, text);
    } else if (action === "edit") {
      const item = target.pending.list().find((entry) => entry.id === id);
      if (item === undefined) return;
      composer.value = composer.value.trim() === "" ? item.text : `${composer.value}\n${item.text}`;
      target.pending.dismiss(id);
      composer.focus();
      requestRender();
    } else if (action === "dismiss") {
      target.pending.dismiss(id);
      requestRender();
    }
  }

  /** Stop the running turn of the open Session. */
  async function stop() {
    const target = current;
    if (api === null || target === null || target.stopping) return null;
    target.stopping = true;
    requestRender();
    try {
      return Boolean((await api.cancel(target.id))?.cancelled);
    } catch (err) {
      if (isUnsupported(err)) unsupported("featureStop", err);
      else report(err);
      return null;
    } finally {
      target.stopping = false;
      requestRender();
    }
  }

  // ---- settings ---------------------------------------------------------

  function setLang(next) {
    lang = saveLang(storage, next);
    t = translator(lang);
    time = timeFormat();
    applyLang();
  }

  function timeFormat() {
    return createTimeFormat({ locale: localeFor(lang, navigatorLanguages), timeZone });
  }

  function help() {
    return showHelp({ document, host: root, t, mac });
  }

  function openDrawer(focus = true) {
    root.setAttribute("data-sidebar", "open");
    header.setDrawer(true);
    if (focus) sidebar.newSession.focus?.();
  }

  function closeDrawer(refocus) {
    if (root.getAttribute("data-sidebar") !== "open") return;
    root.setAttribute("data-sidebar", "closed");
    header.setDrawer(false);
    if (refocus) header.menu.focus?.();
  }

  function destroy() {
    destroyed = true;
    closeCurrent();
    removeShortcuts();
    unsubscribeTheme();
    sidebar.destroy();
    root.replaceChildren();
  }

  // ---- rendering --------------------------------------------------------

  function applyLang() {
    root.setAttribute("lang", lang);
    if (document.documentElement) document.documentElement.setAttribute("lang", lang);
    labels.apply(t);
    banner.applyLang(t);
    sidebar.setLang(lang);
    renderSessions();
    requestRender();
  }

  function renderSessions() {
    sidebar.sessions.render({ sessions, currentId: current?.id ?? null, t, time, query });
  }

  function requestRender() {
    if (renderQueued || destroyed) return;
    renderQueued = true;
    schedule(() => {
      renderQueued = false;
      if (!destroyed) renderTranscript();
    });
  }

  function renderTranscript() {
    const target = current;
    const snap = target?.window?.snapshot() ?? null;
    renderHeader(target, snap);
    composer.setRunning(false);
    if (snap === null) {
      conversation.render({ nodes: [], lang, time, now: now(), notice: target === null ? t("pickSession") : "" });
      return;
    }
    // Back from a reconnect: the host may have restarted, so badges are stale
    // and a message it had only queued may be gone.
    if (target.lastStatus === "reconnecting" && snap.status === "live") recovered(target);
    target.lastStatus = snap.status;
    syncSummary(target.id, snap);
    target.pending.reconcile(snap.events, {
      lost: t("lostRestart"),
      turn: (error) => describeError(error) || t("lostTurn"),
    });
    const nodes = toNodes(snap.events, snap.views);
    const pending = target.pending.list();
    const running = snap.live && snap.loaded && turnRunning(snap.events);
    composer.setRunning(running, target.stopping);
    let notice = "";
    if (!snap.live && snap.loaded) notice = t("coldNotice");
    else if (snap.loaded && nodes.length === 0 && pending.length === 0) notice = t("emptyTranscript");
    const before = follower.measure();
    const previousLo = transcript.getAttribute("data-lo");
    conversation.render({
      nodes,
      pending,
      streaming: snap.streaming,
      running,
      lang,
      time,
      now: now(),
      hasOlder: snap.hasOlder,
      loadingOlder: snap.loadingOlder,
      notice,
    });
    transcript.setAttribute("data-lo", String(snap.lo));
    transcript.setAttribute("data-status", snap.status);
    const lastSeq = nodes.at(-1)?.seq ?? null;
    const grew = lastSeq !== null && target.lastSeq !== null && lastSeq > target.lastSeq;
    target.lastSeq = lastSeq ?? target.lastSeq;
    follower.restore(before, { grew, prepended: previousLo !== null && Number(previousLo) > snap.lo });
    announce(target, snap, nodes);
  }

  function renderHeader(target, snap) {
    if (target === null) {
      header.setTitle("", null);
      header.setStatus("idle", "");
      document.title = t("appName");
      return;
    }
    const name = (snap && latestTitle(snap.events)) ?? titles.get(target.id) ?? shortId(target.id);
    header.setTitle(name, target.id);
    document.title = `${name} · ${t("appName")}`;
    const status = snap?.status ?? "connecting";
    const text = {
      connecting: t("connecting"),
      reconnecting: t("reconnecting"),
      failed: t("failedStatus", { message: snap?.error?.message ?? "" }),
    }[status];
    header.setStatus(status, text ?? "");
  }

  /** New messages, read out once: never the history a Session opens with. */
  function announce(target, snap, nodes) {
    if (!snap.loaded) return;
    if (target.announcedHi === null) {
      target.announcedHi = snap.hi;
      return;
    }
    for (const node of nodes) {
      if (node.seq < target.announcedHi) continue;
      const line = announcement(node, t);
      if (line !== null) announcer.announce(line);
    }
    target.announcedHi = Math.max(target.announcedHi, snap.hi);
  }

  function recovered(target) {
    refreshSessions();
    if (!target.pending.list().some((item) => item.state === "queued") || api === null) return;
    api.getSession(target.id).then(
      (detail) => {
        if (current !== target || detail?.live !== false) return;
        if (target.pending.lost(t("lostRestart"))) requestRender();
      },
      (err) => onError(err),
    );
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

  function report(err) {
    onError(err);
    const key = err?.status === 401 ? "unauthorized" : "error";
    banner.show(() => t(key, { message: err?.message ?? String(err) }));
  }

  function unsupported(feature, err) {
    onError(err);
    banner.show(() => t("unsupported", { feature: t(feature), status: err.status }));
  }

  return Object.freeze({
    start,
    openSession,
    newSession,
    forkAt,
    send,
    stop,
    renameSession,
    deleteSession,
    search,
    setLang,
    refreshSessions,
    destroy,
    registry,
    currentWindow: () => current?.window ?? null,
    currentId: () => current?.id ?? null,
    lang: () => lang,
  });
}

function defaultSchedule(fn) {
  if (typeof globalThis.requestAnimationFrame === "function") globalThis.requestAnimationFrame(fn);
  else queueMicrotask(fn);
}
