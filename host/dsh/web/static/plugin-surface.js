// What UI plugins add around the open Session, for the shell: their panels
// (panels.js) fed with the Session's facts and the clock, their statuses of
// listed Sessions (statuses.js: the open one from its facts, cold ones asked
// once per length), their alerts of newly delivered events (read out to a
// screen reader; the host-wide stream, everywhere.js, is what counts and
// notifies them, for every Session), their actions through the
// actions API, and the once-a-second tick that keeps countdowns and "1
// reminder waiting" current.

import { PanelSlot } from "./panels.js";
import { ColdStates, sessionStatuses } from "./statuses.js";

/** How often panels and statuses are redrawn for the clock (their countdowns). */
export const TICK_MS = 1000;

export class PluginSurface {
  #registry;
  #api;
  #now;
  #tick;
  #follower;
  #announcer;
  #onError;
  #current;
  #refreshSessions;
  #onStatuses;
  #stopTicking = null;
  #lastStatuses = "";
  #cold;

  /**
   * `current()` is the open Session (an OpenSession, or null);
   * `refreshSessions()` reloads the list; `onStatuses()` redraws the list and
   * the header (statuses changed, or a cold Session's state came);
   * `tick(fn) -> stop` calls `fn` about once a second (default from
   * `timers` and `now`); `storage` keeps panels' choices; `matchMedia`
   * answers the panels' media queries (null: none matches).
   */
  constructor({
    document,
    registry,
    api,
    storage = null,
    now,
    timers,
    tick = null,
    matchMedia = null,
    follower,
    announcer,
    current,
    refreshSessions,
    onStatuses,
    onError,
  }) {
    this.#registry = registry;
    this.#api = api;
    this.#now = now;
    this.#tick = tick ?? defaultTick(timers, now);
    this.#follower = follower;
    this.#announcer = announcer;
    this.#current = current;
    this.#refreshSessions = refreshSessions;
    this.#onStatuses = onStatuses;
    this.#onError = onError;
    this.#cold = new ColdStates({ api, wanted: () => registry.statuses().length > 0, onChange: () => onStatuses() });
    this.panels = new PanelSlot({
      document,
      registry,
      storage,
      host: {
        act: (id, plugin, action, args) => this.act(id, plugin, action, args),
        resume: (id) => this.resume(id),
        matches: (query) => {
          try {
            return matchMedia?.(query)?.matches === true;
          } catch {
            return false;
          }
        },
      },
      onError: (err) => onError(err),
    });
  }

  /** Start the tick, if some plugin has a panel or a status (the plugins are loaded). */
  start() {
    if (this.#stopTicking !== null) return;
    if (this.#registry.panels().length === 0 && this.#registry.statuses().length === 0) return;
    this.#stopTicking = this.#tick(() => this.#onTick());
  }

  stop() {
    this.#stopTicking?.();
    this.#stopTicking = null;
  }

  /**
   * Give the panels the open Session's facts and the clock. A panel that
   * grows or shrinks resizes the transcript: a reader at its bottom stays
   * there.
   */
  updatePanels({ lang, time }) {
    const current = this.#current();
    if (current === null) return;
    const atBottom = this.#follower.measure().atBottom;
    this.panels.update({
      sessionId: current.id,
      live: current.facts.live,
      states: current.facts.states(),
      lang,
      timeZone: time.timeZone ?? null,
      locale: time.locale ?? null,
      now: this.#now(),
    });
    if (atBottom && !this.#follower.measure().atBottom) this.#follower.toBottom();
  }

  /** What the plugins say about a listed Session (the open one from its facts). */
  statusesOf(session, { lang }) {
    const current = this.#current();
    const open = current !== null && current.id === session.id ? current : null;
    const asked = this.#cold.states(session.id, session.length ?? 0);
    return sessionStatuses(this.#registry, {
      stateOf: (plugin) => (open !== null ? open.facts.state(plugin) : asked?.[plugin]),
      summary: session,
      live: open?.facts.live ?? session.live ?? null,
      lang,
      now: this.#now(),
      onError: this.#onError,
    });
  }

  /**
   * The list was drawn: look up what its cold Sessions lack. Never the open
   * one: its statuses come from its own facts, and when it goes cold because
   * the reader is deleting it, a lookup would only race the delete (a 404).
   */
  listed(sessions) {
    const open = this.#current()?.id;
    this.#cold.want(open === undefined ? sessions : sessions.filter((session) => session.id !== open));
  }

  /** Newly delivered events of the open Session a plugin flags: read out. */
  tell(arrived, { lang, time }) {
    for (const node of arrived) {
      const describe = this.#registry.alertFor(node.eventType);
      if (describe === undefined) continue;
      let alert = null;
      try {
        alert = describe(node.view, { lang, timeZone: time.timeZone, locale: time.locale, seq: node.seq });
      } catch (err) {
        this.#onError(err);
      }
      if (alert === null || typeof alert?.title !== "string") continue;
      this.#announcer.announce(alert.title);
    }
  }

  /**
   * A panel's action on Session `id` (a reminder's delete, pause, …):
   * resolves to its result once the change is durable, then reads the
   * plugins' states again (the stream also sends them; a cold Session's
   * stream starts only as the action resumes it). Rejects with the host's
   * ApiError, which the panel words.
   */
  async act(id, plugin, action, args) {
    if (this.#api === null) throw new TypeError("no access token");
    const result = await this.#api.act(id, plugin, action, args);
    this.#refreshFacts(id);
    return result;
  }

  /** Make Session `id` live (its due reminders are then delivered). */
  async resume(id) {
    if (this.#api === null) throw new TypeError("no access token");
    const answer = await this.#api.resume(id);
    const current = this.#current();
    if (current?.id === id && current.facts.resumed()) this.#onStatuses();
    this.#refreshFacts(id);
    this.#refreshSessions();
    return answer;
  }

  #refreshFacts(id) {
    const current = this.#current();
    if (current === null || current.id !== id) return;
    current.refreshDetail(this.#api).then(
      (changed) => {
        if (changed) this.#onStatuses();
      },
      (err) => this.#onError(err),
    );
  }

  #onTick() {
    this.#onStatuses({ tick: true });
  }

  /** True if the statuses of `sessions` differ from the last ones seen (for the tick's redraw). */
  statusesChanged(sessions, options) {
    const statuses = JSON.stringify(sessions.map((session) => this.statusesOf(session, options)));
    if (statuses === this.#lastStatuses) return false;
    this.#lastStatuses = statuses;
    return true;
  }
}

/** `tick(fn)` from timers: `fn` just after each whole second of `now()`. */
function defaultTick(timers, now) {
  return (fn) => {
    let timer = null;
    let stopped = false;
    const arm = () => {
      timer = timers.setTimeout(() => {
        if (stopped) return;
        fn();
        arm();
      }, TICK_MS - (now() % TICK_MS) + 5);
    };
    arm();
    return () => {
      stopped = true;
      if (timer !== null) timers.clearTimeout(timer);
    };
  };
}
