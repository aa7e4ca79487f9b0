// Hearing every Session: the host-wide stream `WS /api/live` (DESIGN §14.1).
// The page keeps one open whatever Session is on screen, so a reminder that
// fires in any conversation reaches the reader, and every tab on one host
// shows the same unread counts (the host keeps them; the frames say them).
//
// The rules, each tied to one method:
// - `hello` is a full snapshot of the counts: it replaces the map (#hello);
// - `unread` sets one Session's count (0: all read, here or elsewhere);
// - an `alert` is taken once per `sessionId`+`seq` (a reconnect may replay
//   it) and advances `since`, the largest `at` seen, which the next
//   connection passes so alerts missed meanwhile are replayed after its hello;
// - an alert is news only while it is unread. The host sends a new alert
//   before the count that includes it, and replays old ones without a
//   count, so alerts wait (#pending) until their Session's next count or a
//   short settle delay, and then only the newest `count` of them are told
//   (#settle): one a phone already marked done is never shown again here;
// - `sessions` says the list changed on the host (a Session created, forked,
//   deleted or restored): `onList`, and a hello after a reconnect too,
//   since such a frame may have been missed while away;
// - a connection that ends by itself is opened again with a growing delay
//   (1013, the page fell behind: at once; 1001, the host is going away:
//   backoff, it may come back on the same port); one that ended before its
//   hello is asked about over HTTP (`probe`), since a browser hides why a
//   handshake was refused: a 401 stops it (the token prompt takes over).
//
// Everything is injected (the socket opener, the timers, the probe), so node
// tests drive every interleaving.

/** How long an alert waits for its Session's count before it is judged (ms). */
export const SETTLE_MS = 400;
/** How many alert keys are remembered for de-duplication. */
export const SEEN_KEEP = 2000;
/** Close codes: the page fell behind (reconnect at once). */
export const FELL_BEHIND = 1013;

export class Everywhere {
  #open;
  #timers;
  #probe;
  #onChange;
  #onNews;
  #onRefused;
  #base;
  #max;
  #settleMs;
  #onList;
  #counts = new Map();
  #seen = new Map();
  #pending = [];
  #since = null;
  #connection = null;
  #generation = 0;
  #attempt = 0;
  #retry = null;
  #settleTimer = null;
  #status = "idle";
  #heard = false;

  /**
   * `open(since, {onFrame, onClose}) -> {close()}` opens `WS /api/live`
   * (`since`: epoch ms or null); `timers` is {setTimeout, clearTimeout};
   * `probe() -> Promise` asks the host whether the token still holds (it
   * rejects with `status` 401 when it does not; null: never stop);
   * `onChange(ids)` hears the Sessions whose count changed; `onNews(alert)`
   * each new, still unread alert (`{sessionId, seq, title, body, tag, at}`);
   * `onRefused(err)` the 401 that stopped it; `onList()` that the list of
   * Sessions changed (a `sessions` frame, or a hello after a reconnect: a
   * change may have been missed meanwhile). `backoff` is {baseMs, maxMs}.
   */
  constructor({
    open,
    timers,
    probe = null,
    onChange = () => {},
    onNews = () => {},
    onRefused = () => {},
    onList = () => {},
    backoff = {},
    settleMs = SETTLE_MS,
  }) {
    this.#open = open;
    this.#timers = timers;
    this.#probe = probe;
    this.#onChange = onChange;
    this.#onNews = onNews;
    this.#onRefused = onRefused;
    this.#onList = onList;
    this.#base = backoff.baseMs ?? 500;
    this.#max = backoff.maxMs ?? 15_000;
    this.#settleMs = settleMs;
  }

  /**
   * "idle", "connecting", "ready" (a hello came on this connection),
   * "reconnecting", "refused" (a 401: stopped) or "closed".
   */
  get status() {
    return this.#status;
  }

  /** True once some connection said hello: the counts are the host's (if perhaps stale while reconnecting). */
  get heard() {
    return this.#heard;
  }

  /** The largest `at` of an alert seen (what a reconnect passes as `since`), or null. */
  get since() {
    return this.#since;
  }

  /** The unread count of Session `id` (0 when none is known). */
  count(id) {
    return this.#counts.get(id) ?? 0;
  }

  /** The unread counts of every Session that has any. */
  counts() {
    return new Map(this.#counts);
  }

  /** The unread alerts of every Session together. */
  total() {
    let sum = 0;
    for (const count of this.#counts.values()) sum += count;
    return sum;
  }

  /** Open the stream (again, after `stop` or a refusal: a new token). */
  start() {
    if (this.#status === "connecting" || this.#status === "ready") return;
    this.#clearRetry();
    this.#attempt = 0;
    this.#connect();
  }

  /** The reader is back and the stream is down: try now rather than at the next backoff. */
  wake() {
    if (this.#status !== "reconnecting") return;
    this.#clearRetry();
    this.#connect();
  }

  stop() {
    this.#generation += 1;
    this.#clearRetry();
    if (this.#settleTimer !== null) this.#timers.clearTimeout(this.#settleTimer);
    this.#settleTimer = null;
    this.#connection?.close();
    this.#connection = null;
    this.#status = "closed";
  }

  // ---- the connection -----------------------------------------------------

  #connect() {
    this.#generation += 1;
    const generation = this.#generation;
    const attempt = { hello: false };
    this.#status = "connecting";
    try {
      this.#connection = this.#open(this.#since, {
        onFrame: (frame) => {
          if (generation !== this.#generation) return;
          if (frame?.kind === "hello") attempt.hello = true;
          this.#frame(frame);
        },
        onClose: (info) => {
          if (generation !== this.#generation) return;
          this.#connection = null;
          this.#ended(info, attempt.hello);
        },
      });
    } catch {
      this.#connection = null;
      this.#ended({ code: 0 }, false);
    }
  }

  #ended(info, greeted) {
    this.#status = "reconnecting";
    if (info?.code === FELL_BEHIND && greeted) {
      this.#attempt = 0;
      this.#later(0);
      return;
    }
    const delay = Math.min(this.#max, this.#base * 2 ** this.#attempt);
    this.#attempt += 1;
    if (greeted || this.#probe === null) {
      this.#later(delay);
      return;
    }
    // Refused before its hello: a browser does not say why; HTTP does.
    const generation = this.#generation;
    Promise.resolve()
      .then(() => this.#probe())
      .then(
        () => generation === this.#generation && this.#later(delay),
        (err) => {
          if (generation !== this.#generation) return;
          if (err?.status === 401) {
            this.#status = "refused";
            this.#onRefused(err);
          } else {
            this.#later(delay);
          }
        },
      );
  }

  #later(delay) {
    this.#clearRetry();
    this.#retry = this.#timers.setTimeout(() => {
      this.#retry = null;
      if (this.#status === "reconnecting") this.#connect();
    }, delay);
  }

  #clearRetry() {
    if (this.#retry !== null) this.#timers.clearTimeout(this.#retry);
    this.#retry = null;
  }

  // ---- frames -------------------------------------------------------------

  #frame(frame) {
    if (frame === null || typeof frame !== "object") return;
    if (frame.kind === "hello") this.#hello(frame);
    else if (frame.kind === "alert") this.#alert(frame);
    else if (frame.kind === "unread") this.#unread(frame);
    else if (frame.kind === "sessions") this.#onList();
    // Other kinds are for newer pages: ignored.
  }

  #hello(frame) {
    const next = new Map();
    if (isObject(frame.unread)) {
      for (const [id, count] of Object.entries(frame.unread)) if (isCount(count) && count > 0) next.set(id, count);
    }
    const changed = [...new Set([...this.#counts.keys(), ...next.keys()])].filter(
      (id) => (this.#counts.get(id) ?? 0) !== (next.get(id) ?? 0),
    );
    this.#counts = next;
    this.#status = "ready";
    const again = this.#heard;
    this.#heard = true;
    this.#attempt = 0;
    this.#onChange(changed);
    if (again) this.#onList();
  }

  #unread(frame) {
    if (typeof frame.sessionId !== "string" || !isCount(frame.count)) return;
    const before = this.count(frame.sessionId);
    if (frame.count > 0) this.#counts.set(frame.sessionId, frame.count);
    else this.#counts.delete(frame.sessionId);
    if (before !== frame.count) this.#onChange([frame.sessionId]);
    this.#settle((alert) => alert.sessionId === frame.sessionId);
  }

  #alert(frame) {
    if (typeof frame.sessionId !== "string" || !isCount(frame.seq)) return;
    if (Number.isFinite(frame.at)) this.#since = Math.max(this.#since ?? frame.at, frame.at);
    const key = `${frame.sessionId}\u0000${frame.seq}`;
    if (this.#seen.has(key)) return;
    this.#seen.set(key, true);
    while (this.#seen.size > SEEN_KEEP) this.#seen.delete(this.#seen.keys().next().value);
    this.#pending.push({
      sessionId: frame.sessionId,
      seq: frame.seq,
      title: typeof frame.title === "string" ? frame.title : "",
      body: typeof frame.body === "string" ? frame.body : "",
      tag: typeof frame.tag === "string" && frame.tag !== "" ? frame.tag : `dsh:${frame.sessionId}:${frame.seq}`,
      at: Number.isFinite(frame.at) ? frame.at : null,
    });
    if (this.#settleTimer === null) {
      this.#settleTimer = this.#timers.setTimeout(() => {
        this.#settleTimer = null;
        this.#settle(() => true);
      }, this.#settleMs);
    }
  }

  /**
   * Judge the waiting alerts `which` selects: per Session, unread ones are
   * its newest `count` (reads only move forward), and only those are news.
   */
  #settle(which) {
    const judged = this.#pending.filter(which);
    if (judged.length === 0) return;
    this.#pending = this.#pending.filter((alert) => !which(alert));
    const bySession = new Map();
    for (const alert of judged) {
      if (!bySession.has(alert.sessionId)) bySession.set(alert.sessionId, []);
      bySession.get(alert.sessionId).push(alert);
    }
    for (const [id, alerts] of bySession) {
      alerts.sort((a, b) => a.seq - b.seq);
      const unread = this.count(id);
      for (const alert of alerts.slice(Math.max(0, alerts.length - unread))) this.#onNews(alert);
    }
  }
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isCount(value) {
  return Number.isSafeInteger(value) && value >= 0;
}
