// Messages the reader sent that the log does not show yet. A 202 only means
// "queued": a message is stored once its message/user event is in the log,
// so it stays pending until that event arrives in the window — and shows as
// failed, text kept, with Retry, when the Session says it was not stored:
//
// - the POST failed (refused, or the network broke: the text stays);
// - the lifecycle that queued it ended without storing it: a session/end-seed
//   (a restart or resume) after the point it was queued at, with no
//   message/user for it before;
// - a turn ended that could only have been its own (no turn was running when
//   it was queued, and no message/user came before the turn/end);
// - the host says the Session is cold after a reconnect (`lost()`).
//
// A failed entry whose failure leaves a doubt (a network error, a 5xx, a
// lost lifecycle) is still matched against the log: if its message/user turns
// up after all (the connection broke after the host queued it), it is settled.
// One the host rejected (4xx) was certainly not stored and stays until the
// reader retries or dismisses it.

/**
 * The pending list of one Session. Entries are `{id, text, afterSeq,
 * queuedAt, state, error, reason}`: state "sending" (POST in flight),
 * "queued" (202 received; `queuedAt` is the log length the host reported,
 * or null) or "failed" (`error` says why; `reason` is "rejected" for a 4xx,
 * "error" for a network failure or a 5xx, "lost" or "turn").
 */
export class PendingMessages {
  #items = [];
  #next = 1;

  /** Record a message about to be sent; `afterSeq` is the window's hi now. */
  add(text, afterSeq) {
    const item = { id: this.#next, text, afterSeq, queuedAt: null, state: "sending", error: null, reason: null };
    this.#next += 1;
    this.#items.push(item);
    return item.id;
  }

  /** The host answered 202; `queuedAt` is its `session.length`, if it said. */
  queued(id, queuedAt = null) {
    const at = Number.isInteger(queuedAt) && queuedAt >= 0 ? queuedAt : null;
    this.#update(id, { state: "queued", queuedAt: at });
  }

  failed(id, message, reason = "rejected") {
    this.#update(id, { state: "failed", error: String(message), reason });
  }

  /** Send a failed entry again: it is "sending" from `afterSeq`; returns its text (or null). */
  retry(id, afterSeq) {
    const item = this.#items.find((entry) => entry.id === id);
    if (item === undefined || item.state !== "failed") return null;
    this.#update(id, { state: "sending", afterSeq, queuedAt: null, error: null, reason: null });
    return item.text;
  }

  dismiss(id) {
    const before = this.#items.length;
    this.#items = this.#items.filter((item) => item.id !== id);
    return this.#items.length !== before;
  }

  /** Every queued entry was lost (the Session has no agent holding it). Returns true if any. */
  lost(message) {
    let changed = false;
    this.#items = this.#items.map((item) => {
      if (item.state !== "queued") return item;
      changed = true;
      return { ...item, state: "failed", error: String(message), reason: "lost" };
    });
    return changed;
  }

  /** True when some entry waits for the host (sending or queued). */
  get waiting() {
    return this.#items.some((item) => item.state !== "failed");
  }

  /**
   * Settle entries against the window (`events` ascending, the first at
   * `lo`): drop each one whose message/user (source "user", same text, at or
   * after its `afterSeq`) is there — waiting entries first, oldest first, one
   * event each — then fail the queued ones the log shows were not stored.
   * `messages.lost` and `messages.turn(error)` word the failures. Returns
   * true if anything changed.
   */
  reconcile(events, messages = DEFAULT_MESSAGES) {
    const before = JSON.stringify(this.#items);
    this.#claim(events);
    this.#detectLost(events, messages);
    return JSON.stringify(this.#items) !== before;
  }

  /** The entries in send order (copies). */
  list() {
    return this.#items.map((item) => ({ ...item }));
  }

  #claim(events) {
    const claimed = new Set();
    const settled = new Set();
    const order = [
      ...this.#items.filter((item) => item.state !== "failed"),
      ...this.#items.filter((item) => item.state === "failed" && item.reason !== "rejected"),
    ];
    for (const item of order) {
      const match = events.find(
        (event) =>
          !claimed.has(event.seq) &&
          event.seq >= item.afterSeq &&
          event.type === "message/user" &&
          (event.data?.source?.kind ?? "user") === "user" &&
          sameText(event.data?.text, item.text),
      );
      if (match === undefined) continue;
      claimed.add(match.seq);
      settled.add(item.id);
    }
    this.#items = this.#items.filter((item) => !settled.has(item.id));
  }

  #detectLost(events, messages) {
    const waiting = this.#items
      .filter((item) => item.state === "queued" && item.queuedAt !== null)
      .sort((a, b) => a.queuedAt - b.queuedAt || a.id - b.id);
    if (waiting.length === 0 || events.length === 0) return;
    const lo = events[0].seq;
    const from = waiting[0].queuedAt;
    // The window must cover the point the first one was queued at.
    if (from < lo || from > lo + events.length) return;
    let open = turnOpenBefore(events, from - lo, lo);
    const failures = new Map();
    const eligible = (seq) => waiting.filter((item) => item.queuedAt <= seq && !failures.has(item.id));
    for (let index = from - lo; index < events.length; index += 1) {
      const event = events[index];
      if (event.type === "message/user") {
        open = true;
      } else if (event.type === "session/end-seed") {
        for (const item of eligible(event.seq)) failures.set(item.id, { reason: "lost", error: messages.lost });
        open = false;
      } else if (event.type === "turn/end") {
        // A turn that started after the message was queued and ended with no
        // message/user: the turn was its own, and it was not stored.
        const [first] = open === false ? eligible(event.seq) : [];
        if (first !== undefined) failures.set(first.id, { reason: "turn", error: messages.turn(event.data?.error) });
        open = false;
      }
    }
    this.#items = this.#items.map((item) => {
      const failure = failures.get(item.id);
      return failure === undefined ? item : { ...item, state: "failed", ...failure };
    });
  }

  #update(id, patch) {
    this.#items = this.#items.map((item) => (item.id === id ? { ...item, ...patch } : item));
  }
}

export const DEFAULT_MESSAGES = Object.freeze({
  lost: "the session restarted before storing it",
  turn: (error) => describeError(error) || "the turn ended without storing it",
});

/** "code: message" of a turn/end error, or "". */
export function describeError(error) {
  if (error === null || typeof error !== "object") return "";
  const code = typeof error.code === "string" ? error.code : "";
  const message = typeof error.message === "string" ? error.message : "";
  return [code, message].filter(Boolean).join(": ");
}

/**
 * Whether a turn was running just before `events[index]`: true, false, or
 * null when the window does not reach back far enough to tell.
 */
function turnOpenBefore(events, index, lo) {
  for (let i = index - 1; i >= 0; i -= 1) {
    const type = events[i].type;
    if (type === "message/user") return true;
    if (type === "turn/end" || type === "session/end-seed") return false;
  }
  return lo === 0 ? false : null;
}

// The host may trim what it stores; a trailing newline must not keep a
// message pending forever.
function sameText(stored, sent) {
  return typeof stored === "string" && stored.trim() === sent.trim();
}
