// The application shell: mounts the page (layout.js), holds the state its
// parts share (the Session directory, the open Session, language, theme,
// shortcuts, the plugins' panels and statuses, every Session's unread alerts
// and the reader's attention, the access token) and routes the reader's
// actions to them and to the API.
// Everything it touches is injected, so a node test can mount it on a fake
// DOM.

import { isUnsupported } from "./api.js";
import { createAttention } from "./attention.js";
import { confirmDelete, pendingReminders, showHelp } from "./dialogs.js";
import { Everywhere } from "./everywhere.js";
import { Labels, initialLang, saveLang, translator } from "./i18n.js";
import { buildLayout } from "./layout.js";
import { OpenSession } from "./open-session.js";
import { PluginSurface } from "./plugin-surface.js";
import { loadClientModules } from "./plugins.js";
import { ReadMarks } from "./reading.js";
import { createRegistry } from "./registry.js";
import { sessionName, shortId } from "./session-list.js";
import { SessionDirectory } from "./sessions.js";
import { installShortcuts } from "./shortcuts.js";
import { watchStorage } from "./storage-status.js";
import { createTimeFormat, localeFor } from "./time.js";
import { createTokenPrompt } from "./token-prompt.js";
import { createUndo } from "./undo.js";

/** How long the page waits after a `sessions` frame before it reads the list (a burst is read once), ms. */
export const LIST_SETTLE_MS = 250;
/**
 * How often a visible tab reads the list again (app.js), ms: what another
 * process or host changed sends no frame here (DESIGN §14.1).
 */
export const LIST_POLL_MS = 30_000;

/**
 * Mount the client in `root`.
 *
 * Options: `document`, `root`, `api` (from createApi, or null without a
 * token), `openLive(sessionId, handlers)`, `openEverywhere(since, handlers)`
 * (`WS /api/live`, every Session's alerts and counts; null: none),
 * `storage` (localStorage for the
 * language), `navigatorLanguages`, `importModule(url)`, `timers`,
 * `schedule(fn)` (coalesces renders; default requestAnimationFrame),
 * `initialSession`, `onNavigate(id)`, `onError(err)`, `timeZone` (the
 * reader's IANA zone: times are shown in it and sent with each message),
 * `now()`, `copyText(text)`, `theme` (from createTheme, optional), `mac`
 * (label shortcuts with ⌘), `keyTarget` (where shortcuts are heard;
 * default `document`), `tick(fn) -> stop` (calls `fn` about once a second
 * while panels or statuses show; default from `timers`), `Notification`
 * (the constructor, or null), `createAudio()` (an AudioContext, or null),
 * `focusWindow()`, `saveToken(token)` (keep a pasted token for every tab),
 * `origin` (this page's address, which the token prompt's example names),
 * `matchMedia(query)` (a MediaQueryList, for panels that fit a phone).
 *
 * Returns a controller: `start()`, `openSession(id)`, `newSession()`,
 * `forkAt(seq)`, `send(text?)`, `stop()`, `renameSession(id, title)`,
 * `deleteSession(id)` (then Undo is offered a few seconds), `restoreSession(id)`,
 * `search(query)`, `setLang(lang)`, `refreshSessions()`,
 * `looked()` (the page was shown or focused), `useToken(token)`,
 * `currentWindow()`, `currentId()`, `currentSession()`, `lang()`,
 * `attention`, `registry`, `destroy()`.
 */
export function mountApp({
  document,
  root,
  api,
  openLive,
  openEverywhere = null,
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
  tick = null,
  Notification = null,
  createAudio = () => null,
  focusWindow = () => {},
  saveToken = () => {},
  origin = "http://127.0.0.1:8765",
  matchMedia = null,
}) {
  let lang = initialLang(storage, navigatorLanguages);
  let t = translator(lang);
  let time = timeFormat();
  // The Session on screen (an OpenSession); the one being opened meanwhile
  // (`{id, ready}`: `ready` settles when that open is over, whatever became
  // of it); and the Session New or Fork is making (a promise of its id, or
  // of null when that failed).
  let current = null;
  let opening = null;
  let creating = null;
  let renderQueued = false;
  let destroyed = false;
  let storageStatus = null;
  let started = false;
  let lastReconnects = 0;
  let listMinute = null;
  // The first list was read: a count for a Session it lacks means a new one.
  let listed = false;
  let listTimer = null;
  // The tab title after its count (what is on screen), once drawn.
  let titleBase = null;
  const labels = new Labels();
  const registry = createRegistry({ lang: () => lang });
  const directory = new SessionDirectory({ api, report: (err) => report(err), unsupported: (f, err) => unsupported(f, err) });
  const attention = createAttention({
    document,
    Notification,
    storage,
    createAudio,
    focusWindow,
    onOpen: (id) => {
      openSession(id);
      looked();
    },
    total: () => unreadTotal(),
  });
  // Every Session's alerts and unread counts; the single source of the
  // title's count and of notifications (nothing is counted twice).
  const everywhere =
    api === null || openEverywhere === null
      ? null
      : new Everywhere({
          open: (since, handlers) => openEverywhere(since, handlers),
          timers,
          probe: () => api.health(),
          onChange: (ids) => countsMoved(ids),
          onNews: (alert) => news(alert),
          onRefused: (err) => report(err),
          onList: () => listChanged(),
        });
  const reads = new ReadMarks({ markRead: (id, through) => api.markRead(id, through), onError: (err) => onError(err) });
  const tokenPrompt = createTokenPrompt({ document, labels, origin, onToken: (token) => useToken(token) });
  // Without a token the host answers nothing: what needs it says so instead of failing.
  let locked = false;

  // Built before the layout, which places its panels; the layout's parts it
  // needs are read when it is used.
  const parts = {};
  const surface = new PluginSurface({
    document,
    registry,
    api,
    storage,
    now,
    timers,
    tick,
    matchMedia,
    follower: { measure: () => parts.follower.measure(), toBottom: () => parts.follower.toBottom() },
    announcer: { announce: (line) => parts.announcer.announce(line) },
    current: () => current,
    refreshSessions: (options) => refreshSessions(options),
    onStatuses: (change) => statusesMoved(change),
    onError: (err) => onError(err),
  });

  const { sidebar, header, banner, transcript, follower, announcer, composer, conversation, drawer } = buildLayout({
    document,
    root,
    labels,
    registry,
    timers,
    copyText,
    controls: attention.controls,
    panels: surface.panels.element,
    notices: [tokenPrompt.element],
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
      onRetry: (text) => send(text),
      onLoadOlder: () => current?.window?.loadOlder(),
      onPending: (action, id) => pendingAction(action, id),
      onRenderError: (err) => onError(err),
    },
  });

  Object.assign(parts, { follower, announcer });
  const undo = createUndo({ document, timers, t });
  root.appendChild(undo.element);

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
    if (api.token?.() === "") {
      tokenPrompt.show("tokenMissing");
      lock(true);
      return;
    }
    started = true;
    storageStatus = watchStorage({ document, parent: root, health: () => api.health(), lang: () => lang });
    everywhere?.start();
    await loadPlugins();
    await refreshSessions();
    listed = true;
    if (initialSession) await openSession(initialSession);
    surface.start();
    requestRender();
  }

  /**
   * The reader gave a new token (the prompt): take it if the host accepts
   * it, then carry on — start, or reload the list and the open Session.
   * Resolves to whether it was accepted.
   */
  async function useToken(token) {
    if (api === null) return false;
    const before = api.token();
    api.setToken(token);
    try {
      await api.health();
    } catch (err) {
      if (err?.status === 401) {
        api.setToken(before);
        return false;
      }
      // Another failure (the host is away): the token may well be right.
    }
    saveToken(token);
    tokenPrompt.hide();
    banner.clear();
    lock(false);
    if (!started) {
      await start();
      return true;
    }
    current?.window?.resync();
    reads.reset();
    everywhere?.stop();
    everywhere?.start();
    await refreshSessions();
    requestRender();
    return true;
  }

  // ---- unread alerts ----------------------------------------------------

  /** Session `id`'s unread alerts: the host-wide stream's count once it spoke, else the list's. */
  function unreadOf(id) {
    if (everywhere?.heard) return everywhere.count(id);
    return directory.find(id)?.unread ?? 0;
  }

  function unreadTotal() {
    if (everywhere?.heard) return everywhere.total();
    return directory.sessions.reduce((sum, session) => sum + (Number.isSafeInteger(session.unread) ? session.unread : 0), 0);
  }

  /** Counts changed (here, another tab, another device): badges, the title, notifications. */
  function countsMoved(ids) {
    if (destroyed) return;
    for (const id of ids) attention.unread(id, everywhere.count(id));
    // A conversation made elsewhere since the list was read (another tab, a
    // phone, the API) has no entry to show its count or to open it from.
    if (listed && directory.query === "" && ids.some((id) => everywhere.count(id) > 0 && directory.find(id) === undefined)) {
      refreshSessions({ background: true });
    }
    renderSessions();
    // Now, not at the next frame: a hidden tab gets no frames, and its title
    // is all the reader sees of it.
    drawTitle();
    requestRender();
  }

  /** A new, unread alert of some Session: tell the reader unless they are looking at it. */
  function news(alert) {
    if (destroyed) return;
    const listed = directory.find(alert.sessionId);
    const name = directory.title(alert.sessionId) ?? (listed ? sessionName(listed) : null);
    attention.alert(alert, { name, open: shownId() === alert.sessionId });
  }

  /**
   * The open Session has unread alerts and the reader is looking at it: what
   * the window holds is seen, so mark it read through its last seq.
   */
  function readIfLooking() {
    const target = current;
    if (api === null || target === null || !attention.looking()) return;
    if (unreadOf(target.id) === 0 || !target.window.loaded || target.window.hi === 0) return;
    markRead(target.id, target.window.hi - 1);
  }

  /** Mark Session `id` read through `throughSeq`; resolves to the host's answer or null. */
  async function markRead(id, throughSeq) {
    const answer = await reads.mark(id, throughSeq);
    if (Number.isSafeInteger(answer?.unread) && directory.syncUnread(id, answer.unread)) renderSessions();
    return answer;
  }

  /**
   * The plugins' statuses may have moved: redraw the list and the header.
   * On a tick only the panels are redrawn, and the rest only when a status
   * changed with the clock (a reminder came due).
   */
  function statusesMoved(change) {
    if (destroyed) return;
    if (change?.tick) {
      surface.updatePanels({ lang, time });
      // "active 5 min ago" moves with the minute.
      const minute = Math.floor(now() / 60_000);
      const aged = minute !== listMinute;
      listMinute = minute;
      if (!surface.statusesChanged(directory.sessions, { lang }) && !aged) return;
    }
    renderSessions();
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
    // The reader may have opened a conversation before the modules arrived
    // (a slow host, a big module): its new panels join it now, and the
    // transcript redraws with the new views.
    surface.panels.adopt();
    requestRender();
  }

  function refreshSessions(options) {
    return directory.refresh(options);
  }

  function search(text) {
    return directory.search(text);
  }

  /** Put Session `id` on screen; resolves once it is there (or the open was given up or replaced). */
  function openSession(id) {
    if (!id || current?.id === id) return Promise.resolve();
    if (opening?.id === id) return opening.ready;
    closeCurrent();
    const token = { id, ready: null };
    opening = token;
    token.ready = load(token);
    return token.ready;
  }

  async function load(token) {
    const { id } = token;
    drawer.close(false);
    follower.reset();
    announcer.clear();
    renderSessions();
    onNavigate(id);
    requestRender();
    const live = directory.find(id)?.live ?? null;
    let detail = null;
    try {
      detail = await api.getSession(id);
    } catch (err) {
      if (opening !== token) return;
      if (err?.status === 404) {
        // An old link, a deleted conversation, or one kept by another data dir.
        banner.show(() => t("sessionNotHere", { id }));
        opening = null;
        onNavigate(null);
        renderSessions();
        requestRender();
        return;
      }
      report(err);
    }
    if (opening !== token) return;
    opening = null;
    current = new OpenSession({
      id,
      fetchEvents: (params) => api.events(id, params),
      openLive: (handlers) => openLive(id, handlers),
      live,
      detail,
      timers,
      onChange: () => requestRender(),
      tools: sessionTools(id),
    });
    surface.panels.open(id);
    banner.clear();
    requestRender();
  }

  /**
   * What renderers may do on Session `id` (a delivered reminder's Snooze and
   * Done): a plugin's action, a read mark, its plugins' states.
   */
  function sessionTools(id) {
    return Object.freeze({
      id,
      act: (plugin, action, args) => surface.act(id, plugin, action, args),
      markRead: async (throughSeq) => {
        if (api === null) throw new TypeError("no access token");
        // Asked every time (Done means it): the host's marks only move forward.
        const answer = await api.markRead(id, throughSeq);
        if (Number.isSafeInteger(answer?.unread) && directory.syncUnread(id, answer.unread)) renderSessions();
        return answer;
      },
      state: (plugin) => (current?.id === id ? current.facts.state(plugin) : undefined),
      onError: (err) => onError(err),
    });
  }

  function closeCurrent() {
    opening = null;
    current?.close();
    current = null;
    surface.panels.clear();
  }

  /** Create a Session and open it; resolves to its id, or null when that failed. */
  function newSession() {
    if (api === null || locked) return Promise.resolve(null);
    return making(async () => {
      const session = await api.createSession();
      directory.add(session);
      await openSession(session.id);
      composer.focus();
      return session;
    });
  }

  /** Fork the current Session just after `seq` and open the child. */
  function forkAt(seq) {
    if (api === null || current === null) return Promise.resolve(null);
    const parent = current.id;
    return making(async () => {
      const child = await api.fork(parent, seq + 1);
      directory.add(child);
      await openSession(child.id);
      return child;
    });
  }

  /**
   * Run `make()` (it asks the host for a Session and opens it) as the
   * Session being made, which a message sent meanwhile waits for. Resolves
   * to the new id, or null when it failed (reported).
   */
  async function making(make) {
    const made = (async () => {
      try {
        const session = await make();
        refreshSessions();
        return session.id;
      } catch (err) {
        report(err);
        return null;
      }
    })();
    creating = made;
    try {
      return await made;
    } finally {
      if (creating === made) creating = null;
    }
  }

  function renameSession(id, title) {
    return directory.rename(id, title);
  }

  /** Bring a deleted Session back (the Undo of a delete); resolves to true once restored. */
  function restoreSession(id) {
    return directory.restore(id);
  }

  /**
   * The host said its list changed (`sessions` on WS /api/live): read it
   * again, once for a burst of such frames.
   */
  function listChanged() {
    if (destroyed || listTimer !== null) return;
    listTimer = timers.setTimeout(() => {
      listTimer = null;
      if (!destroyed) refreshSessions({ background: true });
    }, LIST_SETTLE_MS);
  }

  async function deleteSession(id) {
    if (api === null) return false;
    const summary = directory.find(id) ?? { id, title: directory.title(id) };
    const states = current?.id === id ? current.facts.states() : null;
    const reminders = pendingReminders({ states, summary });
    if (!(await confirmDelete({ document, host: root, t, name: sessionName(summary), id, reminders }))) return false;
    if (!(await directory.remove(id))) return false;
    undo.offer({ name: sessionName(summary), undo: () => restoreSession(id) });
    if (shownId() === id) {
      closeCurrent();
      onNavigate(null);
      requestRender();
    }
    return true;
  }

  // ---- messages ---------------------------------------------------------

  async function send(text = composer.value) {
    if (api === null || typeof text !== "string" || text.trim() === "") return;
    const target = await sendTarget();
    if (target === null) return;
    const id = target.queue(text);
    if (text === composer.value) composer.value = "";
    await post(target, id, text);
  }

  /**
   * The Session a message goes to: the one New or Fork is making, or the one
   * being opened, once it is on screen (a reader can press Send before the
   * host has answered: the message is for the Session they asked for, not
   * lost, and not a reason to make another); else the open one; else a new
   * one. Null when that failed or the reader moved to another Session
   * meanwhile: the text then stays in the composer, nothing is sent.
   */
  async function sendTarget() {
    let id;
    if (creating !== null) {
      id = await creating;
    } else if (opening !== null) {
      id = opening.id;
      try {
        await opening.ready;
      } catch {
        // The open failed; whoever opened it hears why. The text stays.
      }
    } else if (current !== null) {
      return current;
    } else {
      id = await newSession();
    }
    return current !== null && current.id === id ? current : null;
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

  /** The reader looks at the page again (shown, focused): the open conversation's alerts are read. */
  function looked() {
    readIfLooking();
    // Back on a tab whose streams are down: try now rather than at the next backoff.
    if (current?.window?.status === "reconnecting") current.window.resync();
    everywhere?.wake();
  }

  function destroy() {
    destroyed = true;
    if (listTimer !== null) timers.clearTimeout(listTimer);
    undo.dismiss();
    everywhere?.stop();
    surface.stop();
    storageStatus?.stop();
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
    undo.applyLang(t);
    attention.applyLang(t);
    tokenPrompt.applyLang(t);
    sidebar.setLang(lang);
    renderSessions();
    requestRender();
  }

  /** Whether the page waits for a usable token: New conversation is off and the list says why. */
  function lock(on) {
    locked = on;
    renderSessions();
    requestRender();
  }

  function renderSessions() {
    sidebar.setLocked(locked, t("newSessionLocked"));
    sidebar.sessions.render({
      locked,
      sessions: directory.sessions,
      currentId: shownId(),
      t,
      time,
      now: now(),
      query: directory.query,
      statuses: (session) => surface.statusesOf(session, { lang }),
      unread: (session) => unreadOf(session.id),
    });
    surface.listed(directory.sessions);
  }

  /** The tab title: the unread count of every Session, then what is on screen. */
  function drawTitle() {
    if (titleBase !== null) document.title = `${attention.prefix()}${titleBase}`;
  }

  /** The id of the Session on screen or being opened, or null. */
  function shownId() {
    return current?.id ?? opening?.id ?? null;
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
      header.setSession(null, "");
      conversation.render({ nodes: [], lang, time, now: now(), notice: id === null ? t("pickSession") : "" });
      return;
    }
    const target = current;
    surface.updatePanels({ lang, time });
    const view = { conversation, composer, follower, announcer, transcript, t, lang, time, now: now() };
    const { snap, recovered, arrived, live } = target.draw(view);
    renderHeader(target.title(directory), target.id, snap.status, snap.error);
    const summary = directory.find(target.id) ?? { id: target.id, live };
    // Open or closed is what the stream last said: while it is away (reconnecting,
    // failed) the badge says nothing rather than something stale beside "Reconnecting…".
    const known = snap.status === "live" || snap.status === "cold" ? live : null;
    header.setSession(known, known === null ? "" : t(known ? "open" : "closed"), surface.statusesOf(summary, { lang }));
    const grew = snap.loaded && directory.syncLength(target.id, snap.hi);
    let listChanged = grew;
    if (live !== null) listChanged = directory.syncLive(target.id, live) || listChanged;
    if (listChanged) renderSessions();
    // The host names an untitled Session after its first stored message:
    // ask again while the list still knows it by its id only.
    if (grew && !directory.title(target.id)) refreshSessions({ background: true });
    // The facts may have moved with the window (a cold log that grew).
    surface.updatePanels({ lang, time });
    surface.tell(arrived, { lang, time });
    // Back from a reconnect: the host may have restarted, so badges are
    // stale, the Session may be cold now and a message it had only queued
    // may be gone.
    if (recovered) {
      // A live stream's news, not the reader's request: if the host is away
      // again already, the connection state says so (sessions.js `refresh`).
      refreshSessions({ background: true });
      target.recover(api, t("lostRestart")).then(
        (changed) => {
          if (changed) requestRender();
        },
        (err) => onError(err),
      );
    }
    if (snap.status === "reconnecting") probeToken(target);
    readIfLooking();
  }

  /**
   * The stream keeps failing: a host that came back with another token
   * refuses the WebSocket without saying why, so ask it over HTTP once per
   * failed attempt; a 401 shows the token prompt.
   */
  function probeToken(target) {
    const attempts = target.window.stats().reconnects;
    if (attempts === lastReconnects || api === null) return;
    lastReconnects = attempts;
    api.health().catch((err) => {
      if (err?.status === 401 && !destroyed) report(err);
    });
  }

  function renderHeader(name, id, status, error = null) {
    header.setTitle(name, id);
    titleBase = name === null ? t("appName") : `${name} · ${t("appName")}`;
    drawTitle();
    const text = {
      connecting: t("connecting"),
      reconnecting: t("reconnecting"),
      failed: t("failedStatus", { message: error?.message ?? "" }),
    }[status];
    header.setStatus(status ?? "idle", text ?? "");
  }

  function report(err) {
    // A refused token is not a fault of the page: the prompt is its answer.
    if (err?.status === 401) {
      tokenPrompt.show("tokenRefused");
      lock(true);
      return;
    }
    onError(err);
    banner.show(() => t("error", { message: err?.message ?? String(err) }));
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
    restoreSession,
    search,
    setLang,
    refreshSessions,
    looked,
    useToken,
    destroy,
    registry,
    attention,
    everywhere,
    markRead,
    currentWindow: () => current?.window ?? null,
    currentId: () => current?.id ?? null,
    currentSession: () => current,
    lang: () => lang,
  });
}

function defaultSchedule(fn) {
  if (typeof globalThis.requestAnimationFrame === "function") globalThis.requestAnimationFrame(fn);
  else queueMicrotask(fn);
}
