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
