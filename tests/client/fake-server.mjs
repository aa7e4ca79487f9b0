// A model of the dsh web host for one Session, precise about the orders that
// matter to the session window:
// - appends go to every subscribed connection's frame queue, in order;
// - `flush(through)` advances the durable watermark and queues a sidecar
//   frame (the full event again plus its view) for each newly durable event
//   that has a view: never on append;
// - a history request is answered from the log as it is when the request is
//   *served* (which a test may do long before the response is *delivered*),
//   with views only for durable events;
// - a restart loses the non-durable suffix, appends session/end-seed and
//   closes every connection (after the frames already in flight);
// - in lossy mode raw event frames may vanish (sidecars never do), which
//   is how the tests manufacture true gaps.
// Every value crosses the "wire" as a JSON copy.

export function wire(value) {
  return JSON.parse(JSON.stringify(value));
}

/** The view the host would compute for a durable event, or undefined. */
export function viewOf(event) {
  if (event.type === "schedule/change" && event.data?.op === "dispatch") {
    return {
      scheduleId: event.data.id,
      prompt: `reminder ${event.data.id}`,
      occurrenceAt: new Date(event.time).toISOString(),
      deliveryMode: "session-local",
    };
  }
  if (event.type === "note/pin") return { pinned: event.data.text, seq: event.seq };
  return undefined;
}

export class FakeServer {
  constructor({ random = Math.random, lossy = false, header = { id: "s1", version: 1 } } = {}) {
    this.random = random;
    this.lossy = lossy;
    this.header = header;
    this.log = [];
    this.durable = 0;
    this.clock = 1_700_000_000_000;
    this.connections = [];
    this.requests = [];
    this.lifecycle = 1;
    this.fetchEvents = (params) => this.#request(params);
    this.openLive = (handlers) => this.#open(handlers);
  }

  // ---- the Session --------------------------------------------------

  append(type, data) {
    this.clock += 1 + Math.floor(this.random() * 5);
    const event = { seq: this.log.length, type, time: this.clock, data };
    this.log.push(event);
    for (const conn of this.#subscribed()) {
      if (this.lossy && this.random() < 0.2) continue;
      conn.queue.push({ kind: "event", event: wire(event) });
    }
    return event;
  }

  /** Make events [durable, through) durable and send their sidecars. */
  flush(through = this.log.length) {
    const end = Math.min(through, this.log.length);
    for (let seq = this.durable; seq < end; seq += 1) {
      const event = this.log[seq];
      const view = viewOf(event);
      if (view === undefined) continue;
      for (const conn of this.#subscribed()) {
        // Same event, keys in another order: identity is structural.
        const { data, time, type } = event;
        conn.queue.push({
          kind: "event",
          event: wire({ data, time, type, seq }),
          sidecar: { for: "event", view: wire(view) },
        });
      }
    }
    this.durable = Math.max(this.durable, end);
  }

  delta(text) {
    for (const conn of this.#subscribed()) conn.queue.push({ kind: "delta", text });
  }

  /** A frame about the Session (`{kind: "state"}`, `{kind: "live"}`) to every subscriber. */
  signal(frame) {
    for (const conn of this.#subscribed()) conn.queue.push(wire(frame));
  }

  /** Crash and recover: the non-durable suffix is gone, connections close. */
  restart() {
    this.log.length = this.durable;
    this.lifecycle += 1;
    for (const conn of this.connections) {
      if (conn.subscribed && !conn.closing) {
        conn.closing = true;
        conn.queue.push({ close: true });
      }
    }
    this.append("session/end-seed", {});
  }

  /** What `GET /events` answers right now. */
  history({ from, before, limit = 500 } = {}) {
    let events;
    if (from !== undefined) events = this.log.slice(from, from + limit);
    else if (before !== undefined) events = this.log.slice(Math.max(0, before - limit), before);
    else events = this.log.slice(Math.max(0, this.log.length - limit));
    const views = {};
    for (const event of events) {
      const view = event.seq < this.durable ? viewOf(event) : undefined;
      if (view !== undefined) views[String(event.seq)] = view;
    }
    return wire({ header: this.header, events, views, attached: true, tail: this.log.length });
  }

  // ---- requests -----------------------------------------------------

  #request(params) {
    return new Promise((resolve, reject) => {
      this.requests.push({ params: { ...params }, resolve, reject, response: null });
    });
  }

  serve(request) {
    request.response ??= this.history(request.params);
  }

  respond(request) {
    this.serve(request);
    this.requests.splice(this.requests.indexOf(request), 1);
    request.resolve(request.response);
  }

  fail(request, status = 0) {
    this.requests.splice(this.requests.indexOf(request), 1);
    request.reject(Object.assign(new Error(`request failed (${status})`), { status }));
  }

  // ---- connections --------------------------------------------------

  #open(handlers) {
    const conn = {
      handlers,
      queue: [],
      subscribed: false,
      closing: false,
      closedByClient: false,
      done: false,
    };
    this.connections.push(conn);
    return {
      close: () => {
        conn.closedByClient = true;
      },
    };
  }

  #subscribed() {
    return this.connections.filter((conn) => conn.subscribed && !conn.closing && !conn.closedByClient);
  }

  /** Connections waiting for the server to accept them. */
  pendingConnections() {
    return this.connections.filter((conn) => !conn.subscribed && !conn.done);
  }

  /** Connections with frames to deliver. */
  busyConnections() {
    return this.connections.filter((conn) => conn.queue.length > 0 && !conn.done);
  }

  /** Subscribe `conn` (its hello carries the tail at this instant). */
  accept(conn) {
    if (conn.closedByClient) {
      conn.done = true;
      return;
    }
    conn.subscribed = true;
    conn.queue.push({ kind: "hello", tail: this.log.length });
  }

  /** Deliver the next frame of `conn` to the client (if it still listens). */
  deliver(conn) {
    const frame = conn.queue.shift();
    if (frame.close) {
      conn.done = true;
      conn.queue.length = 0;
      if (!conn.closedByClient) conn.handlers.onClose({ code: 1012, reason: "restart" });
      return;
    }
    if (!conn.closedByClient) conn.handlers.onFrame(wire(frame));
  }

  /** The server gives up on a slow client; `graceful` keeps queued frames. */
  drop(conn, graceful) {
    if (conn.closing || conn.done) return;
    conn.closing = true;
    if (!graceful) conn.queue.length = 0;
    conn.queue.push({ close: true });
  }

  /** Drop connections the client closed (they can deliver nothing). */
  prune() {
    this.connections = this.connections.filter((conn) => !conn.done && !conn.closedByClient);
  }
}

/** setTimeout/clearTimeout under the test's control. */
export class FakeTimers {
  constructor() {
    this.pending = new Map();
    this.next = 1;
    this.delays = [];
  }

  setTimeout(fn, delay) {
    const id = this.next;
    this.next += 1;
    this.pending.set(id, { fn, delay });
    this.delays.push(delay);
    return id;
  }

  clearTimeout(id) {
    this.pending.delete(id);
  }

  /** Run every pending timer (a timer set while running waits for the next call). */
  fireAll() {
    const due = [...this.pending.entries()];
    this.pending.clear();
    for (const [, timer] of due) timer.fn();
    return due.length;
  }
}

/** mulberry32: a small seeded generator, so a failing seed replays exactly. */
export function seeded(seed) {
  let state = seed >>> 0;
  return function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Let every pending promise continuation run. */
export function tick() {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The HTTP API of a dsh web host (DESIGN §9, second edition) over FakeServers,
 * as a `fetch` for createApi. Sessions are FakeServers (their event requests
 * wait for `FakeServer.respond`, like the live stream); messages wait in a
 * Session's inbox until `take(id)` plays the agent and stores them.
 *
 * `secondEdition: false` answers like a host before the second edition: no
 * titles, `?q=` ignored, PATCH / DELETE are 405, `/cancel` is 404.
 * `token`, when set, is the only bearer token answered (else 401), and can
 * be changed (a restart with `--new-token`). `plugins.get(id)` is what
 * `GET /api/sessions/{id}` says under "plugins" (default `{}`);
 * `POST /api/sessions/{id}/actions` is answered by `onAction(id, body)`
 * (its return value is the result; throw `httpFailure(...)` to refuse).
 * `failNext(method, pathPattern, {status, body} | "network")` makes one
 * matching request fail; `hold(method, pathPattern)` keeps one in flight
 * until released. `requests` records `[method, path, body]`.
 *
 * Third edition: `alert(id, seq, content)` stores an alert of Session `id`
 * (as the host does at the commit point) and tells every page on
 * `openEverywhere` (`WS /api/live`: hello with the counts, a replay after
 * `since`, alert and unread frames, served by `pump`); `POST .../read`
 * moves a Session's read mark; list rows carry `unread`.
 */
export class FakeHttpHost {
  constructor({ secondEdition = true, modules = [], token = null } = {}) {
    this.secondEdition = secondEdition;
    this.token = token;
    this.plugins = new Map();
    this.onAction = () => {
      throw new HttpFailure(404, "unknown_plugin", "no plugin answers actions here");
    };
    this.modules = modules;
    this.servers = new Map();
    this.summaries = new Map();
    this.inboxes = new Map();
    this.requests = [];
    this.failures = [];
    this.holds = [];
    this.clock = 10;
    this.created = 0;
    this.alerts = [];
    this.readThrough = new Map();
    this.pages = [];
    this.pageSince = [];
    this.trash = new Map();
    this.refusing = false;
    this.fetch = (url, init = {}) => this.#fetch(url, init);
    this.openLive = (id, handlers) => this.servers.get(id).openLive(handlers);
    this.openEverywhere = (since, handlers, token = null) => this.#openPage(since, handlers, token);
  }

  // ---- every Session's alerts (WS /api/live) -------------------------

  /** Store an alert of Session `id` at `seq` and tell every page: the alert, then the count. */
  alert(id, seq, { title = `alert ${seq}`, body = "", tag = `dsh:${id}:${seq}` } = {}) {
    this.clock += 1;
    const alert = { kind: "alert", sessionId: id, seq, title, body, tag, at: 1_700_000_000_000 + this.clock };
    this.alerts.push(alert);
    this.#tell(alert);
    this.#tell({ kind: "unread", sessionId: id, count: this.unread(id) });
    return alert;
  }

  /** Tell every page the list changed (`{"kind": "sessions"}`), as the host does after a create, delete or restore. */
  listChanged() {
    this.#tell({ kind: "sessions" });
  }

  /**
   * Bring Session `id` back from the trash, telling no page (what the CLI in
   * another process does); false when the trash does not hold it.
   */
  restore(id) {
    const trashed = this.trash.get(id);
    if (trashed === undefined) return false;
    this.trash.delete(id);
    this.servers.set(id, trashed.server);
    this.summaries.set(id, { ...trashed.summary, live: false });
    this.inboxes.set(id, trashed.inbox);
    return true;
  }

  /** Session `id`'s unread alerts. */
  unread(id) {
    const through = this.readThrough.get(id) ?? -1;
    return this.alerts.filter((alert) => alert.sessionId === id && alert.seq > through).length;
  }

  /** Mark Session `id` read through `throughSeq` (marks only move forward); tells the pages a changed count. */
  markRead(id, throughSeq) {
    const before = this.unread(id);
    this.readThrough.set(id, Math.max(this.readThrough.get(id) ?? -1, throughSeq));
    const after = this.unread(id);
    if (after !== before) this.#tell({ kind: "unread", sessionId: id, count: after });
    return after;
  }

  /** End every page's stream with `code` (1001: the host goes away; 1013: the page fell behind). */
  closePages(code = 1001) {
    for (const page of this.pages) if (!page.done) page.queue.push({ close: code });
  }

  /** Refuse the next page handshakes (they close before any frame, like a refused upgrade). */
  refusePages(refuse = true) {
    this.refusing = refuse;
  }

  /** A page's stream; `token` (as its URL carries it) is checked like a Session's stream checks it. */
  #openPage(since, handlers, token) {
    const page = { since, handlers, token, queue: [], accepted: false, done: false, closedByClient: false };
    this.pages.push(page);
    this.pageSince.push(since);
    return {
      close: () => {
        page.closedByClient = true;
        page.done = true;
      },
    };
  }

  #tell(frame) {
    for (const page of this.pages) if (page.accepted && !page.done) page.queue.push(structuredClone(frame));
  }

  /** Serve the pages: accept new ones (hello, then the replay), deliver frames. Returns the work done. */
  servePages() {
    let work = 0;
    for (const page of this.pages) {
      if (page.done) continue;
      if (!page.accepted) {
        work += 1;
        if (this.refusing || (this.token !== null && page.token !== this.token)) {
          page.done = true;
          page.handlers.onClose({ code: 1006, reason: "" });
          continue;
        }
        page.accepted = true;
        const unread = {};
        for (const id of new Set(this.alerts.map((alert) => alert.sessionId))) if (this.unread(id) > 0) unread[id] = this.unread(id);
        page.queue.push({ kind: "hello", unread });
        if (page.since !== null) for (const alert of this.alerts.filter((item) => item.at > page.since).slice(0, 100)) page.queue.push(structuredClone(alert));
      }
      while (page.queue.length > 0 && !page.done) {
        const frame = page.queue.shift();
        work += 1;
        if (frame.close !== undefined) {
          page.done = true;
          page.handlers.onClose({ code: frame.close, reason: "" });
        } else {
          page.handlers.onFrame(wire(frame));
        }
      }
    }
    this.pages = this.pages.filter((page) => !page.done);
    return work;
  }

  addSession(id, { live = true, lineage = null, events = [], title = undefined } = {}) {
    const server = new FakeServer({ header: { id, version: 1 } });
    for (const [type, data] of events) server.append(type, data);
    server.flush();
    this.servers.set(id, server);
    this.inboxes.set(id, []);
    this.clock += 1;
    this.summaries.set(id, { id, createdAt: this.clock, live, lineage, title });
    return server;
  }

  /** The agent takes the next queued message: its message/user is appended. */
  take(id) {
    const item = this.inboxes.get(id).shift();
    if (item === undefined) return null;
    return this.servers.get(id).append("message/user", item);
  }

  failNext(method, path, reply) {
    this.failures.push({ method, path, reply });
  }

  /**
   * Hold the next `method` request whose path matches `path` (a RegExp
   * source): it is routed (and so answered from the host's state) only once
   * the returned gate's `release()` is called. `gate.arrived` says whether
   * the request came; a test acts while it is in flight.
   */
  hold(method, path) {
    let release;
    const opened = new Promise((resolve) => {
      release = resolve;
    });
    const gate = { method, path, arrived: false, opened, release: () => release() };
    this.holds.push(gate);
    return gate;
  }

  summary(id) {
    const { title, ...rest } = this.summaries.get(id);
    const server = this.servers.get(id);
    const base = { ...rest, length: server.log.length };
    if (!this.secondEdition) return base;
    return { ...base, title: title ?? firstLine(server.log) ?? null, unread: this.unread(id) };
  }

  async #fetch(url, init) {
    const method = init.method ?? "GET";
    const parsed = new URL(url, "http://fake.host");
    const body = init.body === undefined ? undefined : JSON.parse(init.body);
    this.requests.push([method, `${parsed.pathname}${parsed.search}`, body]);
    const failure = this.failures.findIndex((f) => f.method === method && new RegExp(f.path).test(parsed.pathname));
    if (failure !== -1) {
      const { reply } = this.failures.splice(failure, 1)[0];
      if (reply === "network") throw new TypeError("Failed to fetch");
      return response(reply.status, reply.body);
    }
    if (this.token !== null && init.headers?.Authorization !== `Bearer ${this.token}`) {
      return response(401, { error: { code: "unauthorized", message: "missing or wrong access token; send Authorization: Bearer <token>" } });
    }
    const held = this.holds.findIndex((h) => h.method === method && new RegExp(h.path).test(parsed.pathname));
    if (held !== -1) {
      const gate = this.holds.splice(held, 1)[0];
      gate.arrived = true;
      await gate.opened;
    }
    await Promise.resolve();
    try {
      return await this.#route(method, parsed, body);
    } catch (err) {
      if (err instanceof HttpFailure) return response(err.status, { error: { code: err.code, message: err.message } });
      throw err;
    }
  }

  async #route(method, url, body) {
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== "api") throw new HttpFailure(404, "not_found", `no route ${url.pathname}`);
    const [, collection, id, action] = parts;
    if (collection === "client-modules" && method === "GET") return response(200, { modules: this.modules });
    if (collection === "health" && method === "GET") return response(200, { ok: true, version: "fake" });
    if (collection !== "sessions") throw new HttpFailure(404, "not_found", `no route ${url.pathname}`);
    if (id === undefined) {
      if (method === "GET") return response(200, { sessions: this.#list(url.searchParams.get("q")) });
      if (method === "POST") {
        this.created += 1;
        const fresh = `n${this.created}`;
        this.addSession(fresh);
        return response(201, { session: this.summary(fresh) });
      }
      throw new HttpFailure(405, "method_not_allowed", `${method} is not allowed on ${url.pathname}`);
    }
    const server = this.servers.get(id);
    if (action === "restore" && method === "POST") {
      if (server !== undefined) throw new HttpFailure(409, "session_exists", `a session ${JSON.stringify(id)} is already stored`);
      if (!this.restore(id)) throw new HttpFailure(404, "session_not_found", `the trash holds no session ${JSON.stringify(id)}`);
      this.listChanged();
      return response(200, { session: this.summary(id) });
    }
    if (action === undefined) {
      if (method === "GET") {
        this.#mustHave(server, id);
        const plugins = this.plugins.get(id) ?? {};
        return response(200, { header: server.header, live: this.summaries.get(id).live, length: server.log.length, agent: null, plugins });
      }
      if (!this.secondEdition) throw new HttpFailure(405, "method_not_allowed", `${method} is not allowed on ${url.pathname}`);
      this.#mustHave(server, id);
      if (method === "PATCH") {
        const title = typeof body?.title === "string" ? body.title.trim() : "";
        if (title === "") throw new HttpFailure(422, "invalid_body", "title: must not be empty");
        this.summaries.get(id).title = title;
        server.append("session/title", { title });
        server.flush();
        return response(200, { session: this.summary(id) });
      }
      if (method === "DELETE") {
        this.trash.set(id, { server, summary: this.summaries.get(id), inbox: this.inboxes.get(id) });
        this.servers.delete(id);
        this.summaries.delete(id);
        return response(204, "");
      }
      throw new HttpFailure(405, "method_not_allowed", `${method} is not allowed on ${url.pathname}`);
    }
    if (action === "events" && method === "GET") {
      this.#mustHave(server, id);
      const params = {};
      for (const key of ["from", "before", "limit"]) {
        if (url.searchParams.has(key)) params[key] = Number(url.searchParams.get(key));
      }
      return response(200, await server.fetchEvents(params));
    }
    if (method !== "POST") throw new HttpFailure(405, "method_not_allowed", `${method} is not allowed on ${url.pathname}`);
    if (action === "cancel" && !this.secondEdition) throw new HttpFailure(404, "not_found", `no route ${url.pathname}`);
    this.#mustHave(server, id);
    if (action === "messages") {
      if (typeof body?.text !== "string" || body.text.trim() === "") throw new HttpFailure(422, "invalid_body", "text: the message is empty");
      const resumed = !this.summaries.get(id).live;
      if (resumed) {
        server.append("session/end-seed", {});
        server.flush();
        this.summaries.get(id).live = true;
      }
      const data = { text: body.text, source: { kind: "user" } };
      if (typeof body.timeZone === "string") data.timeZone = body.timeZone;
      this.inboxes.get(id).push(data);
      return response(202, { queued: true, resumed, session: this.summary(id) });
    }
    if (action === "fork") {
      const atSeq = body?.atSeq ?? server.log.length;
      const child = `${id}-fork`;
      const copied = server.log.slice(0, atSeq).map((event) => [event.type, event.data]);
      this.addSession(child, { lineage: { parentId: id, forkedAt: atSeq }, events: [...copied, ["session/end-seed", {}]] });
      return response(201, { session: this.summary(child) });
    }
    if (action === "cancel") {
      const running = turnOpen(server.log);
      if (running) {
        server.append("turn/end", { status: "error", error: { code: "cancelled", message: "stopped by the reader" } });
        server.flush();
      }
      return response(200, { cancelled: running });
    }
    if (action === "read") {
      if (!Number.isSafeInteger(body?.throughSeq) || body.throughSeq < 0) throw new HttpFailure(422, "invalid_body", "throughSeq: must be a seq");
      return response(200, { unread: this.markRead(id, body.throughSeq) });
    }
    if (action === "actions") {
      return response(200, { result: await this.onAction(id, body) });
    }
    if (action === "resume") {
      if (!this.summaries.get(id).live) {
        server.append("session/end-seed", {});
        server.flush();
        this.summaries.get(id).live = true;
      }
      return response(200, { session: this.summary(id) });
    }
    throw new HttpFailure(404, "not_found", `no route ${url.pathname}`);
  }

  #list(q) {
    let ids = [...this.summaries.keys()];
    if (this.secondEdition && q) {
      const needle = q.toLowerCase();
      ids = ids.filter((id) => {
        const summary = this.summary(id);
        const first = firstLine(this.servers.get(id).log) ?? "";
        return String(summary.title ?? "").toLowerCase().includes(needle) || first.toLowerCase().includes(needle);
      });
    }
    return ids.map((id) => this.summary(id));
  }

  #mustHave(server, id) {
    if (server === undefined) throw new HttpFailure(404, "session_not_found", `no session ${id}`);
  }
}

/** A refusal for `FakeHttpHost.onAction` to throw. */
export function httpFailure(status, code, message) {
  return new HttpFailure(status, code, message);
}

class HttpFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function response(status, body) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return { ok: status >= 200 && status < 300, status, text: async () => text };
}

function firstLine(log) {
  const first = log.find((event) => event.type === "message/user");
  return first === undefined ? undefined : String(first.data.text).split("\n")[0].slice(0, 60);
}

function turnOpen(log) {
  for (let i = log.length - 1; i >= 0; i -= 1) {
    if (log[i].type === "turn/end" || log[i].type === "session/end-seed") return false;
    if (log[i].type === "message/user") return true;
  }
  return false;
}

/** Run the host until nothing moves: the agent takes queued messages, streams and requests are served. */
export async function pump(host, timers, { take = true, fire = true } = {}) {
  for (let round = 0; round < 200; round += 1) {
    let work = 0;
    await tick();
    work += host.servePages?.() ?? 0;
    for (const [id, server] of host.servers) {
      if (take && host.take(id) !== null) work += 1;
      server.flush();
      for (const conn of server.pendingConnections()) {
        server.accept(conn);
        work += 1;
      }
      for (const conn of server.busyConnections()) {
        while (conn.queue.length > 0 && !conn.done) {
          server.deliver(conn);
          work += 1;
        }
      }
      for (const request of [...server.requests]) {
        server.respond(request);
        work += 1;
      }
      server.prune();
    }
    if (fire) work += timers?.fireAll() ?? 0;
    await tick();
    if (work === 0) return;
  }
  throw new Error("the fake host did not settle");
}
