// The session window: the browser's copy of a contiguous slice of one
// Session's log, kept equal to what a fresh history fetch would return.
//
// Pure logic: no DOM, no globals. History comes from an injected
// `fetchEvents(params)`, live frames from an injected `openLive(handlers)`,
// timers from an injected `{setTimeout, clearTimeout}`, so node tests drive
// every interleaving.
//
// The rules, each tied to one method:
// - events are kept by seq in one contiguous run [lo, hi); views by seq;
// - a live event beyond hi waits in `liveBuffer` (#bufferEvent) and is drained
//   the moment hi reaches it (#drain);
// - a repeated seq is accepted only for a deeply identical event; a sidecar on
//   it attaches the view; a different event is an identity conflict and
//   triggers a full resync (#accept, #conflict);
// - a buffered gap (or hi below the hello tail) starts a `?from=` repair, and
//   a repair that advanced but left a gap pulls again (#checkGap, #repair);
// - older pages (`?before=`) are prepended while the live tail keeps landing
//   in the same arrays; a sidecar below the window is held with the in-flight
//   page and attaches only if the page returns the identical event (#prepend);
// - every connection, resync and close starts a new generation: a page,
//   repair or tail load from an older generation, and its `finally`, never
//   touches the rebuilt window (#newGeneration and the `gen` checks);
// - views delivered with history responses are attached to their events.

import { jsonEqual } from "./json.js";
import { ReasoningStream, deltaChannel } from "./reasoning.js";

/** Events per history request when the caller does not say (server max 500). */
export const DEFAULT_LIMIT = 200;

/** Event types whose live arrival ends the "assistant is typing" text. */
const ENDS_STREAMING = new Set(["message/assistant", "turn/end"]);

/** HTTP statuses after which retrying cannot help. */
const FATAL_STATUSES = new Set([401, 403, 404, 410]);

/** A history response or live frame that breaks the wire contract. */
export class ProtocolError extends Error {
  constructor(message) {
    super(message);
    this.name = "ProtocolError";
    this.code = "protocol";
  }
}

/**
 * One Session's window.
 *
 * Options:
 * - `fetchEvents(params) -> Promise<history>`: `params` is `{limit}`,
 *   `{from, limit}` or `{before, limit}`; the promise resolves to the body of
 *   `GET /api/sessions/{id}/events` or rejects (an `err.status` of 401, 403,
 *   404 or 410 stops the window with status "failed").
 * - `openLive({onFrame, onClose}) -> {close()}`: opens the live stream; calls
 *   `onFrame(frame)` per decoded frame and `onClose(info)` once when the
 *   stream ends by itself (never after `close()` was called on the handle).
 * - `live` (default true): follow the live stream; false reads history only
 *   (a cold Session), until `setLive(true)`.
 * - `limit`, `timers` ({setTimeout, clearTimeout}), `backoff`
 *   ({baseMs, maxMs}) for reconnects, `onListenerError(err)`.
 * - `onSignal(frame)`: the stream's frames about the Session rather than its
 *   log — `{"kind": "state", plugin, state}` (a plugin's state changed, sent
 *   once that change is durable) and `{"kind": "live", live}` (the Session
 *   went cold or came back) — as they arrive, from the current connection
 *   only. The window keeps neither.
 *
 * Status is one of "idle", "connecting", "loading", "live", "cold",
 * "reconnecting", "failed", "closed".
 */
export class SessionWindow {
  #fetchEvents;
  #openLive;
  #limit;
  #timers;
  #backoffBase;
  #backoffMax;
  #onListenerError;
  #onSignal;
  #listeners = new Set();

  #live;
  #started = false;
  #closed = false;
  #gen = 0;
  #transport = null;
  #transportToken = null;
  #timer = null;
  #attempt = 0;
  #status = "idle";
  #error = null;

  #loaded = false;
  #lo = 0;
  #events = [];
  #views = new Map();
  #header = null;
  #buffer = new Map();
  #helloTail = null;
  #loadingTail = false;
  #repairing = false;
  #page = null;
  #streaming = "";
  #reasoning = new ReasoningStream();
  #stats = { resyncs: 0, repairs: 0, reconnects: 0, pages: 0 };

  constructor({
    fetchEvents,
    openLive = null,
    live = true,
    limit = DEFAULT_LIMIT,
    timers = globalThis,
    backoff = {},
    onListenerError = (err) => globalThis.console?.error(err),
    onSignal = () => {},
  }) {
    if (typeof fetchEvents !== "function") throw new TypeError("fetchEvents must be a function");
    if (live && typeof openLive !== "function") {
      throw new TypeError("openLive must be a function for a live window");
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
      throw new RangeError("limit must be an integer in 1..500");
    }
    this.#fetchEvents = fetchEvents;
    this.#openLive = openLive;
    this.#live = Boolean(live);
    this.#limit = limit;
    this.#timers = timers;
    this.#backoffBase = backoff.baseMs ?? 250;
    this.#backoffMax = backoff.maxMs ?? 10_000;
    this.#onListenerError = onListenerError;
    this.#onSignal = onSignal;
  }

  // ---- public surface -------------------------------------------------

  /** Begin following the Session (idempotent). */
  start() {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#begin();
  }

  /** Stop for good: closes the stream, cancels timers, drops in-flight results. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelTimer();
    this.#dropTransport();
    this.#newGeneration();
    this.#status = "closed";
    this.#emit();
  }

  /** Switch between following the live stream and reading history only. */
  setLive(live) {
    const next = Boolean(live);
    if (next === this.#live || this.#closed) return;
    if (next && typeof this.#openLive !== "function") {
      throw new TypeError("openLive must be a function for a live window");
    }
    this.#live = next;
    if (!this.#started) return;
    this.#cancelTimer();
    this.#attempt = 0;
    this.#begin();
  }

  /** Throw the window away and load it again (same as an identity conflict). */
  resync() {
    if (this.#started && !this.#closed) this.#conflict();
  }

  /**
   * Fetch the page just below the window and prepend it. Resolves to true if
   * events were prepended; false if there was nothing to do, another page is
   * in flight, the request failed, or the window was rebuilt meanwhile.
   */
  async loadOlder() {
    if (!this.#loaded || this.#page !== null || this.#lo === 0 || this.#closed) return false;
    const gen = this.#gen;
    const page = { before: this.#lo, hi: this.#hi, held: new Map() };
    this.#page = page;
    this.#stats.pages += 1;
    this.#emit();
    try {
      const body = await this.#fetchEvents({ before: page.before, limit: this.#limit });
      if (gen !== this.#gen) return false;
      return this.#prepend(page, body);
    } catch (err) {
      if (gen === this.#gen) this.#error = describe(err);
      return false;
    } finally {
      if (gen === this.#gen && this.#page === page) {
        this.#page = null;
        this.#emit();
      }
    }
  }

  /** Call `listener(window)` after every change; returns the unsubscribe function. */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** An immutable picture of the window for rendering and tests. */
  snapshot() {
    return Object.freeze({
      status: this.#status,
      live: this.#live,
      loaded: this.#loaded,
      lo: this.#lo,
      hi: this.#hi,
      events: this.#events.slice(),
      views: new Map(this.#views),
      header: this.#header,
      hasOlder: this.#loaded && this.#lo > 0,
      loadingOlder: this.#page !== null,
      streaming: this.#streaming,
      reasoning: this.#reasoning.snapshot(),
      error: this.#error,
      generation: this.#gen,
      buffered: this.#buffer.size,
    });
  }

  /** Counters for diagnostics and tests: resyncs, repairs, reconnects, pages. */
  stats() {
    return { ...this.#stats };
  }

  get status() {
    return this.#status;
  }

  get loaded() {
    return this.#loaded;
  }

  get lo() {
    return this.#lo;
  }

  get hi() {
    return this.#hi;
  }

  // ---- lifecycle ------------------------------------------------------

  get #hi() {
    return this.#lo + this.#events.length;
  }

  #begin() {
    if (this.#live) this.#connect();
    else this.#loadDetached();
  }

  /**
   * Start a generation: everything in flight belongs to the old one and will
   * be ignored when it settles. The arrays stay (the UI keeps showing them)
   * but are no longer `loaded`: the next tail load replaces them.
   */
  #newGeneration() {
    this.#gen += 1;
    this.#loaded = false;
    this.#buffer.clear();
    this.#loadingTail = false;
    this.#repairing = false;
    this.#page = null;
    this.#streaming = "";
    this.#reasoning.clear();
    return this.#gen;
  }

  #connect() {
    this.#newGeneration();
    this.#dropTransport();
    this.#helloTail = null;
    if (this.#status !== "reconnecting") this.#status = "connecting";
    const token = {};
    this.#transportToken = token;
    let handle;
    try {
      handle = this.#openLive({
        onFrame: (frame) => {
          if (this.#transportToken === token) this.#onFrame(frame);
        },
        onClose: (info) => {
          if (this.#transportToken === token) this.#onTransportClosed(info);
        },
      });
    } catch (err) {
      if (this.#transportToken === token) this.#fail(err);
      return;
    }
    if (this.#transportToken === token) this.#transport = handle;
    else handle?.close?.();
    this.#emit();
  }

  #loadDetached() {
    const gen = this.#newGeneration();
    this.#dropTransport();
    this.#helloTail = null;
    this.#status = "loading";
    this.#emit();
    this.#loadTail(gen);
  }

  #dropTransport() {
    const handle = this.#transport;
    this.#transport = null;
    this.#transportToken = null;
    if (handle) {
      try {
        handle.close();
      } catch {
        // Closing a dead socket may throw; it is dead either way.
      }
    }
  }

  #onTransportClosed() {
    const beforeHello = this.#helloTail === null;
    this.#transport = null;
    this.#transportToken = null;
    const gen = this.#newGeneration();
    this.#scheduleReconnect();
    if (beforeHello) this.#askWhy(gen);
  }

  /**
   * A stream that ended before its hello may have been refused, and a browser
   * hides why: ask over HTTP. A Session that is gone answers 404 there, which
   * stops the window instead of reconnecting to it forever.
   */
  #askWhy(gen) {
    Promise.resolve()
      .then(() => this.#fetchEvents({ limit: 1 }))
      .then(
        () => {},
        (err) => {
          if (gen === this.#gen && FATAL_STATUSES.has(describe(err).status)) this.#fail(err);
        },
      );
  }

  #scheduleReconnect() {
    if (this.#closed) return;
    this.#status = "reconnecting";
    this.#stats.reconnects += 1;
    const delay = Math.min(this.#backoffMax, this.#backoffBase * 2 ** this.#attempt);
    this.#attempt += 1;
    this.#cancelTimer();
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = null;
      if (!this.#closed) this.#begin();
    }, delay);
    this.#emit();
  }

  #cancelTimer() {
    if (this.#timer !== null) this.#timers.clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** A request or the stream failed: retry with backoff unless retrying is hopeless. */
  #fail(err) {
    this.#error = describe(err);
    this.#dropTransport();
    this.#newGeneration();
    if (FATAL_STATUSES.has(this.#error.status)) {
      this.#cancelTimer();
      this.#status = "failed";
      this.#emit();
      return;
    }
    this.#scheduleReconnect();
  }

  /** Identity conflict: the window cannot be trusted; rebuild it from scratch now. */
  #conflict() {
    this.#stats.resyncs += 1;
    this.#cancelTimer();
    this.#dropTransport();
    this.#newGeneration();
    if (this.#live) this.#status = "reconnecting";
    this.#begin();
    return false;
  }

  #emit() {
    for (const listener of [...this.#listeners]) {
      try {
        listener(this);
      } catch (err) {
        this.#onListenerError(err);
      }
    }
  }

  // ---- live frames ----------------------------------------------------

  #onFrame(frame) {
    if (frame === null || typeof frame !== "object") return;
    if (frame.kind === "hello") {
      if (Number.isInteger(frame.tail) && frame.tail >= 0) this.#helloTail = frame.tail;
      // The tail load waits for hello: the stream is subscribed by then, so
      // every append or flush after the load was served reaches us as a frame.
      if (!this.#loaded && !this.#loadingTail) this.#loadTail(this.#gen);
      this.#emit();
      return;
    }
    if (frame.kind === "state" || frame.kind === "live") {
      try {
        this.#onSignal(frame);
      } catch (err) {
        this.#onListenerError(err);
      }
      return;
    }
    if (frame.kind === "delta") {
      if (typeof frame.text === "string" && frame.text !== "") {
        if (deltaChannel(frame) === "reasoning") this.#reasoning.add(frame.text);
        else this.#streaming += frame.text;
        this.#emit();
      }
      return;
    }
    if (frame.kind !== "event" || !isEvent(frame.event)) return;
    const view = sidecarView(frame);
    if (view === undefined && ENDS_STREAMING.has(frame.event.type)) {
      this.#streaming = "";
      this.#reasoning.clear();
    }
    this.#receive(frame.event, view);
    this.#emit();
  }

  #receive(event, view) {
    if (this.#loaded && event.seq < this.#lo) {
      if (view !== undefined && this.#page !== null) {
        this.#page.held.set(event.seq, { event, view });
      }
      return;
    }
    const gen = this.#gen;
    if (this.#accept(event, view) && gen === this.#gen) this.#checkGap();
  }

  // ---- the merge rules ------------------------------------------------

  /**
   * Place one event (with its view, or undefined) in the window. Returns
   * false when it caused an identity conflict (the window is being rebuilt:
   * the caller must stop).
   */
  #accept(event, view) {
    const seq = event.seq;
    if (!this.#loaded || seq > this.#hi) return this.#bufferEvent(event, view);
    if (seq < this.#lo) return true;
    if (seq < this.#hi) {
      if (!jsonEqual(this.#events[seq - this.#lo], event)) return this.#conflict();
      if (view !== undefined) this.#views.set(seq, view);
      return true;
    }
    // seq === hi: the buffer never holds hi (#drain empties it whenever hi moves).
    this.#events.push(event);
    if (view !== undefined) this.#views.set(seq, view);
    this.#drain();
    return true;
  }

  #bufferEvent(event, view) {
    const waiting = this.#buffer.get(event.seq);
    if (waiting === undefined) {
      this.#buffer.set(event.seq, { event, view });
      return true;
    }
    if (!jsonEqual(waiting.event, event)) return this.#conflict();
    if (view !== undefined) waiting.view = view;
    return true;
  }

  #drain() {
    for (let next = this.#buffer.get(this.#hi); next !== undefined; ) {
      this.#buffer.delete(next.event.seq);
      this.#events.push(next.event);
      if (next.view !== undefined) this.#views.set(next.event.seq, next.view);
      next = this.#buffer.get(this.#hi);
    }
  }

  #gapRemains() {
    return this.#buffer.size > 0 || (this.#helloTail !== null && this.#hi < this.#helloTail);
  }

  #checkGap() {
    if (this.#loaded && !this.#repairing && this.#gapRemains()) this.#repair(this.#gen);
  }

  // ---- history requests -----------------------------------------------

  async #loadTail(gen) {
    this.#loadingTail = true;
    try {
      const body = await this.#fetchEvents({ limit: this.#limit });
      if (gen !== this.#gen) return;
      this.#loadingTail = false;
      this.#install(body);
    } catch (err) {
      if (gen === this.#gen) this.#fail(err);
    } finally {
      if (gen === this.#gen) this.#loadingTail = false;
    }
  }

  /** Replace the arrays with a tail page, then fold in what the stream buffered. */
  #install(body) {
    const page = parseHistory(body);
    if (page === null) {
      this.#fail(new ProtocolError("malformed history response"));
      return;
    }
    this.#lo = page.events.length > 0 ? page.events[0].seq : page.tail;
    this.#events = page.events;
    this.#views = page.views;
    this.#header = page.header;
    this.#loaded = true;
    this.#status = this.#live ? "live" : "cold";
    this.#attempt = 0;
    this.#error = null;
    const waiting = [...this.#buffer.values()].sort((a, b) => a.event.seq - b.event.seq);
    this.#buffer.clear();
    for (const { event, view } of waiting) {
      // Below the new window: a later page brings it (and its view: a view
      // is only ever sent for a durable event, and history includes those).
      if (event.seq < this.#lo) continue;
      if (!this.#accept(event, view)) return;
    }
    this.#checkGap();
    this.#emit();
  }

  async #repair(gen) {
    this.#repairing = true;
    this.#stats.repairs += 1;
    const from = this.#hi;
    try {
      const body = await this.#fetchEvents({ from, limit: this.#limit });
      if (gen !== this.#gen) return;
      const page = parseHistory(body);
      if (page === null || (page.events.length > 0 && page.events[0].seq !== from)) {
        this.#fail(new ProtocolError("malformed gap repair response"));
        return;
      }
      // The server's log is shorter than the window it gave us: another lifecycle.
      if (page.tail < from) {
        this.#conflict();
        return;
      }
      this.#header = page.header ?? this.#header;
      for (const event of page.events) {
        if (!this.#accept(event, page.views.get(event.seq))) return;
      }
      if (this.#hi === from && this.#gapRemains()) {
        this.#fail(new ProtocolError("gap repair made no progress"));
        return;
      }
    } catch (err) {
      if (gen === this.#gen) this.#fail(err);
      return;
    } finally {
      if (gen === this.#gen) this.#repairing = false;
    }
    this.#checkGap();
    this.#emit();
  }

  /** Apply an older page; held sidecars attach only to identical returned events. */
  #prepend(page, body) {
    const older = parseHistory(body);
    if (older === null) {
      this.#fail(new ProtocolError("malformed history page"));
      return false;
    }
    const events = older.events;
    if (older.tail < page.hi || events.length === 0 || events.at(-1).seq !== page.before - 1) {
      return this.#conflict();
    }
    this.#events = events.concat(this.#events);
    this.#lo = events[0].seq;
    for (const [seq, view] of older.views) this.#views.set(seq, view);
    for (const [seq, held] of page.held) {
      if (seq < this.#lo || seq >= page.before) continue;
      if (!jsonEqual(this.#events[seq - this.#lo], held.event)) return this.#conflict();
      if (!this.#views.has(seq)) this.#views.set(seq, held.view);
    }
    return true;
  }
}

// ---- wire decoding ------------------------------------------------------

function isEvent(value) {
  return (
    value !== null &&
    typeof value === "object" &&
    Number.isInteger(value.seq) &&
    value.seq >= 0 &&
    typeof value.type === "string"
  );
}

function sidecarView(frame) {
  const sidecar = frame.sidecar;
  if (sidecar === null || typeof sidecar !== "object" || sidecar.for !== "event") return undefined;
  return sidecar.view === null ? undefined : sidecar.view;
}

/**
 * Decode a history body into `{events, views: Map<seq, view>, tail, header}`,
 * or null when it is not a contiguous run of events ending at or before `tail`.
 */
export function parseHistory(body) {
  if (body === null || typeof body !== "object" || !Array.isArray(body.events)) return null;
  const { events, tail } = body;
  if (!Number.isInteger(tail) || tail < 0) return null;
  for (let i = 0; i < events.length; i += 1) {
    if (!isEvent(events[i])) return null;
    if (i > 0 && events[i].seq !== events[i - 1].seq + 1) return null;
  }
  if (events.length > 0 && events.at(-1).seq >= tail) return null;
  const views = new Map();
  const raw = body.views;
  if (raw !== undefined && raw !== null) {
    if (typeof raw !== "object" || Array.isArray(raw)) return null;
    const lo = events.length > 0 ? events[0].seq : 0;
    for (const [key, view] of Object.entries(raw)) {
      const seq = Number(key);
      if (!Number.isInteger(seq) || seq < lo || seq >= lo + events.length) continue;
      if (view !== null && view !== undefined) views.set(seq, view);
    }
  }
  return { events: events.slice(), views, tail, header: body.header ?? null };
}

function describe(err) {
  const status = Number.isInteger(err?.status) ? err.status : 0;
  const code = typeof err?.code === "string" ? err.code : "error";
  const message = typeof err?.message === "string" ? err.message : String(err);
  return { status, code, message };
}
