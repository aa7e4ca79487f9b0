// Messages the reader sent that the log does not show yet. A 202 only means
// "queued": a message is durable once its message/user event is stored, so
// it stays pending until that event arrives in the window.

/**
 * The pending list of one Session. Entries are `{id, text, afterSeq, state,
 * error}` with state "sending" (POST in flight), "queued" (202 received) or
 * "failed" (the POST was refused; `error` says why).
 */
export class PendingMessages {
  #items = [];
  #next = 1;

  /** Record a message about to be sent; `afterSeq` is the window's hi now. */
  add(text, afterSeq) {
    const item = { id: this.#next, text, afterSeq, state: "sending", error: null };
    this.#next += 1;
    this.#items.push(item);
    return item.id;
  }

  queued(id) {
    this.#update(id, { state: "queued" });
  }

  failed(id, message) {
    this.#update(id, { state: "failed", error: String(message) });
  }

  dismiss(id) {
    this.#items = this.#items.filter((item) => item.id !== id);
  }

  /**
   * Drop every entry whose message/user event (source "user", same text, at
   * or after the entry's `afterSeq`) is in `events`. Each event settles at
   * most one entry, oldest entry first. Returns true if anything changed.
   */
  reconcile(events) {
    const claimed = new Set();
    const before = this.#items.length;
    this.#items = this.#items.filter((item) => {
      if (item.state === "failed") return true;
      const match = events.find(
        (event) =>
          !claimed.has(event.seq) &&
          event.seq >= item.afterSeq &&
          event.type === "message/user" &&
          (event.data?.source?.kind ?? "user") === "user" &&
          sameText(event.data?.text, item.text),
      );
      if (match === undefined) return true;
      claimed.add(match.seq);
      return false;
    });
    return this.#items.length !== before;
  }

  /** The entries in send order (copies). */
  list() {
    return this.#items.map((item) => ({ ...item }));
  }

  #update(id, patch) {
    this.#items = this.#items.map((item) => (item.id === id ? { ...item, ...patch } : item));
  }
}

// The host may trim what it stores; a trailing newline must not keep a
// message pending forever.
function sameText(stored, sent) {
  return typeof stored === "string" && stored.trim() === sent.trim();
}
