// The application shell: mounts the page (layout.js), holds the state its
// parts share (the Session directory, the open Session, language, theme,
// shortcuts) and routes the reader's actions to them and to the API.
// Everything it touches is injected, so a node test can mount it on a fake
// DOM.

import { isUnsupported } from "./api.js";
import { confirmDelete, showHelp } from "./dialogs.js";
import { Labels, initialLang, saveLang, translator } from "./i18n.js";
import { buildLayout } from "./layout.js";
import { OpenSession } from "./open-session.js";
import { loadClientModules } from "./plugins.js";
import { createRegistry } from "./registry.js";
import { sessionName, shortId } from "./session-list.js";
import { SessionDirectory } from "./sessions.js";
import { installShortcuts } from "./shortcuts.js";
import { createTimeFormat, localeFor } from "./time.js";

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
  // The Session on screen (an OpenSession), and the id being opened meanwhile.
  let current = null;
  let opening = null;
  let renderQueued = false;
  let destroyed = false;
  const labels = new Labels();
  const registry = createRegistry({ lang: () => lang });
  const directory = new SessionDirectory({ api, report: (err) => report(err), unsupported: (f, err) => unsupported(f, err) });

  const { sidebar, header, banner, transcript, follower, announcer, composer, conversation, drawer } = buildLayout({
    document,
    root,
    labels,
    registry,
    timers,
    copyText,
    handlers: {
      onNewSession: () => newSession(),
      onSearch: (text) => search(text),
      onOpen: (id) => openSession(id),
      onRename: (id, title) => renameSession(id, title),
      onDelete: (id) => deleteSession(id),
      onLang: (next) => setLang(next),
      onTheme: () => theme?.toggle(),
      onHelp: () => help(),
      onSend: (text) => send(text),
      onStop: () => stop(),
      onFork: (seq) => forkAt(seq),
      onLoadOlder: () => current?.window?.loadOlder(),
      onPending: (action, id) => pendingAction(action, id),
      onRenderError: (err) => onError(err),
    },
  });

  const removeShortcuts = installShortcuts({
    target: keyTarget,
    handlers: {
      search: () => {
        drawer.open(false);
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
      escape: () => drawer.close(true),
    },
  });
  const unsubscribeDirectory = directory.subscribe(() => {
    renderSessions();
    requestRender();
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

  function refreshSessions() {
    return directory.refresh();
  }

  function search(text) {
    return directory.search(text);
  }

  async function openSession(id) {
    if (!id || (current?.id ?? opening) === id) return;
    closeCurrent();
    const token = { id };
    opening = token;
    drawer.close(false);
    follower.reset();
    announcer.clear();
    renderSessions();
    onNavigate(id);
    requestRender();
    let live = directory.find(id)?.live ?? true;
    try {
      live = Boolean((await api.getSession(id)).live);
    } catch (err) {
      if (opening !== token) return;
      report(err);
      if (err?.status === 404) {
        opening = null;
        onNavigate(null);
        renderSessions();
        requestRender();
        return;
      }
    }
    if (opening !== token) return;
    opening = null;
    current = new OpenSession({
      id,
      fetchEvents: (params) => api.events(id, params),
      openLive: (handlers) => openLive(id, handlers),
      live,
      timers,
      onChange: () => requestRender(),
    });
    banner.clear();
    requestRender();
  }

  function closeCurrent() {
    opening = null;
    current?.close();
    current = null;
  }

  async function newSession() {
    if (api === null) return null;
    try {
      const session = await api.createSession();
      directory.add(session);
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
      directory.add(child);
      await openSession(child.id);
      refreshSessions();
      return child.id;
    } catch (err) {
      report(err);
      return null;
    }
  }

  function renameSession(id, title) {
    return directory.rename(id, title);
  }

  async function deleteSession(id) {
    if (api === null) return false;
    const summary = directory.find(id) ?? { id, title: directory.title(id) };
    if (!(await confirmDelete({ document, host: root, t, name: sessionName(summary) }))) return false;
    if (!(await directory.remove(id))) return false;
    if ((current?.id ?? opening) === id) {
      closeCurrent();
      onNavigate(null);
      requestRender();
    }
    return true;
  }

  // ---- messages ---------------------------------------------------------

  async function send(text = composer.value) {
    if (api === null || typeof text !== "string" || text.trim() === "") return;
    if (current === null && opening === null && (await newSession()) === null) return;
    const target = current;
    if (target === null) return;
    const id = target.queue(text);
    if (text === composer.value) composer.value = "";
    await post(target, id, text);
  }

  async function post(target, id, text) {
    follower.stick();
    requestRender();
    if (await target.post(api, id, text, { timeZone, offline: t("offline") })) refreshSessions();
    requestRender();
  }

  function pendingAction(action, id) {
    const target = current;
    if (target === null) return;
    if (action === "retry") {
      const text = target.requeue(id);
      if (text !== null) post(target, id, text);
      return;
    }
    const item = target.pending.list().find((entry) => entry.id === id);
    if (item === undefined || (action !== "edit" && action !== "dismiss")) return;
    if (action === "edit") {
      composer.value = composer.value.trim() === "" ? item.text : `${composer.value}\n${item.text}`;
      composer.focus();
    }
    target.pending.dismiss(id);
    requestRender();
  }

  /** Stop the running turn of the open Session. */
  async function stop() {
    const target = current;
    if (api === null || target === null) return null;
    const stopping = target.stop(api);
    requestRender();
    try {
      return await stopping;
    } catch (err) {
      if (isUnsupported(err)) unsupported("featureStop", err);
      else report(err);
      return null;
    } finally {
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

  function destroy() {
    destroyed = true;
    closeCurrent();
    removeShortcuts();
    unsubscribeTheme();
    unsubscribeDirectory();
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
    sidebar.sessions.render({
      sessions: directory.sessions,
      currentId: current?.id ?? opening?.id ?? null,
      t,
      time,
      query: directory.query,
    });
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
    composer.setRunning(false);
    if (current === null) {
      const id = opening?.id ?? null;
      renderHeader(id === null ? null : shortId(id), id, id === null ? null : "connecting");
      conversation.render({ nodes: [], lang, time, now: now(), notice: id === null ? t("pickSession") : "" });
      return;
    }
    const target = current;
    const view = { conversation, composer, follower, announcer, transcript, t, lang, time, now: now() };
    const { snap, recovered } = target.draw(view);
    renderHeader(target.title(directory), target.id, snap.status, snap.error);
    if (snap.loaded && directory.syncLength(target.id, snap.hi)) renderSessions();
    // Back from a reconnect: the host may have restarted, so badges are
    // stale and a message it had only queued may be gone.
    if (recovered) {
      refreshSessions();
      target.checkLost(api, t("lostRestart")).then(
        (lost) => {
          if (lost) requestRender();
        },
        (err) => onError(err),
      );
    }
  }

  function renderHeader(name, id, status, error = null) {
    header.setTitle(name, id);
    document.title = name === null ? t("appName") : `${name} · ${t("appName")}`;
    const text = {
      connecting: t("connecting"),
      reconnecting: t("reconnecting"),
      failed: t("failedStatus", { message: error?.message ?? "" }),
    }[status];
    header.setStatus(status ?? "idle", text ?? "");
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
