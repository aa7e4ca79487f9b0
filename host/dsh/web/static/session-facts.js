// What the page knows about the open Session besides its log: whether it is
// live (an agent runs it) and each plugin's state of it (`dsh_session_state`:
// the reminders). Two sources feed it, and the newer one wins:
//
// - the stream: `{"kind": "state"}` frames (sent once a change is durable)
//   and `{"kind": "live"}` frames (the Session went cold or came back);
// - `GET /api/sessions/{id}` (`live`, `plugins`), asked when the Session is
//   opened and again after a reconnect — a host that restarted has no live
//   Session, and a cold one gets no state frames. An answer is taken only if
//   no frame arrived while it was in flight (`asked` is the `version()` at
//   request time), so a slow answer never undoes a newer frame.
//
// Without `live` frames (a host before them) a cold Session whose log grows
// is live again: only a live Session appends.

export class SessionFacts {
  /** true, false, or null while not known. */
  live = null;
  #states = new Map();
  #version = 0;
  #coldTail = null;
  #changes = 0;

  constructor({ live = null } = {}) {
    this.live = typeof live === "boolean" ? live : null;
  }

  /** Bumped by every stream frame: pass it to `detail()` as `asked`. */
  version() {
    return this.#version;
  }

  /** Bumped by every change of what is known (for cheap change detection). */
  get changes() {
    return this.#changes;
  }

  /** `{plugin: state}` of every plugin that has one (a fresh plain object). */
  states() {
    return Object.fromEntries(this.#states);
  }

  /** The state of `plugin`, or undefined. */
  state(plugin) {
    return this.#states.get(plugin);
  }

  /** A `state` or `live` frame from the stream. Returns true if anything changed. */
  signal(frame) {
    this.#version += 1;
    if (frame?.kind === "live" && typeof frame.live === "boolean") return this.#setLive(frame.live);
    if (frame?.kind === "state" && typeof frame.plugin === "string" && frame.plugin !== "") {
      return this.#setState(frame.plugin, frame.state);
    }
    return false;
  }

  /**
   * The body of `GET /api/sessions/{id}` requested when `version()` was
   * `asked`. Returns true if anything changed.
   */
  detail(body, asked) {
    if (asked !== this.#version || body === null || typeof body !== "object") return false;
    let changed = typeof body.live === "boolean" ? this.#setLive(body.live) : false;
    if (body.plugins !== null && typeof body.plugins === "object" && !Array.isArray(body.plugins)) {
      for (const plugin of [...this.#states.keys()]) {
        if (!Object.hasOwn(body.plugins, plugin)) changed = this.#setState(plugin, null) || changed;
      }
      for (const [plugin, state] of Object.entries(body.plugins)) changed = this.#setState(plugin, state) || changed;
    }
    return changed;
  }

  /** The reader's message was accepted: posting resumes a cold Session. */
  resumed() {
    return this.#setLive(true);
  }

  /** The window's log reaches `hi` (exclusive): a cold Session that appended is live. */
  grew(hi) {
    if (this.live !== false) return false;
    if (this.#coldTail === null || hi <= this.#coldTail) {
      this.#coldTail = hi;
      return false;
    }
    return this.#setLive(true);
  }

  #setLive(live) {
    if (live === this.live) return false;
    this.live = live;
    this.#coldTail = null;
    this.#changes += 1;
    return true;
  }

  #setState(plugin, state) {
    if (state === null || state === undefined) {
      if (!this.#states.delete(plugin)) return false;
    } else {
      if (JSON.stringify(this.#states.get(plugin)) === JSON.stringify(state)) return false;
      this.#states.set(plugin, state);
    }
    this.#changes += 1;
    return true;
  }
}
