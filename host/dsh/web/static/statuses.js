// Plugins' statuses of Sessions (registry.registerStatus): the short lines
// the list and the header show — "1 reminder waiting" for a cold Session
// whose reminder is due. A status is worked out from the best the page has:
// the open Session's facts (its state, kept current by the stream), a cold
// Session's state asked of the host (ColdStates, below), or the compact
// summary the list carries (`summary.plugins`).

/**
 * The statuses of one Session: `[{plugin, text, tone}]` in registration
 * order. `stateOf(plugin)` gives the plugin's full state, or undefined;
 * `summary` is the list summary (or null). A describer that throws is
 * skipped and reported to `onError`.
 */
export function sessionStatuses(registry, { stateOf = () => undefined, summary = null, live, lang, now, onError = () => {} }) {
  const out = [];
  for (const { plugin, describe } of registry?.statuses?.() ?? []) {
    let value = stateOf(plugin);
    let kind = "state";
    if (value === undefined || value === null) {
      value = summary?.plugins?.[plugin];
      kind = "summary";
    }
    if (value === undefined || value === null) continue;
    try {
      const status = describe(value, { kind, live, lang, now });
      if (status !== null && typeof status?.text === "string" && status.text !== "") {
        out.push({ plugin, text: status.text, tone: typeof status.tone === "string" ? status.tone : "info" });
      }
    } catch (err) {
      onError(err);
    }
  }
  return out;
}

/** How many cold Sessions of the list have their state asked for, at most. */
export const COLD_LOOKUPS = 20;

/**
 * The plugins' states of the list's cold Sessions, from `GET
 * /api/sessions/{id}` (a stored log's state: one type-filtered read on the
 * host, no agent started). A cold Session does not change while it is
 * cold, so each is asked once per length; requests go one at a time, for the
 * first `COLD_LOOKUPS` cold Sessions listed, and only while a plugin has a
 * status to show (`wanted()`).
 */
export class ColdStates {
  #api;
  #onChange;
  #wanted;
  #known = new Map();
  #queue = [];
  #asking = null;

  constructor({ api, wanted, onChange }) {
    this.#api = api;
    this.#wanted = wanted;
    this.#onChange = onChange;
  }

  /** The states of Session `id` at `length`, or undefined. */
  states(id, length) {
    const known = this.#known.get(id);
    return known !== undefined && known.length === length ? known.plugins : undefined;
  }

  /** Look up what `sessions` (the list, newest first) lacks. */
  want(sessions) {
    if (this.#api === null || !this.#wanted()) return;
    const cold = sessions.filter((session) => session.live === false && !hasSummary(session)).slice(0, COLD_LOOKUPS);
    this.#queue = cold
      .filter((session) => session.id !== this.#asking && this.states(session.id, session.length ?? 0) === undefined)
      .map((session) => ({ id: session.id, length: session.length ?? 0 }));
    this.#next();
  }

  async #next() {
    if (this.#asking !== null) return;
    const item = this.#queue.shift();
    if (item === undefined) return;
    this.#asking = item.id;
    try {
      const detail = await this.#api.getSession(item.id);
      const plugins = detail?.plugins !== null && typeof detail?.plugins === "object" ? detail.plugins : {};
      // A Session that turned live meanwhile: its stream (when open) or the
      // next list refresh tells the rest.
      this.#known.set(item.id, { length: Number.isInteger(detail?.length) ? detail.length : item.length, plugins });
      this.#onChange();
    } catch {
      // Gone, or the host is away: the list says nothing extra about it.
      this.#known.set(item.id, { length: item.length, plugins: {} });
    } finally {
      this.#asking = null;
    }
    this.#next();
  }
}

function hasSummary(session) {
  return session.plugins !== null && typeof session.plugins === "object" && Object.keys(session.plugins).length > 0;
}
