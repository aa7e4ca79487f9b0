// The Session on screen: its session window, what is known about it besides
// its log (live or cold, its plugins' states: session-facts.js), the
// reader's pending messages, and how one render of it goes — settle pending
// messages against the log, build the nodes, show Stop while a turn runs,
// keep the scroll position, read new messages out, and say which presented
// events just arrived (a delivered reminder is news; the history is not).
//
// The live stream is followed whether the Session is live or cold: a cold
// Session's stream says hello and waits, so a tab that watches it sees it
// come back (a message from another tab, a woken reminder) by itself.

import { announcement } from "./messages.js";
import { PendingMessages, describeError } from "./pending.js";
import { SessionFacts } from "./session-facts.js";
import { shortId } from "./session-list.js";
import { SessionWindow } from "./session-window.js";
import { latestTitle, toNodes, turnRunning } from "./transcript.js";

export class OpenSession {
  #unsubscribe;
  #lastStatus = null;
  #lastSeq = null;
  #announcedHi = null;
  #arrivalFloor = null;
  #arrived = new Set();

  /**
   * Follow Session `id`: `fetchEvents(params)` and `openLive(handlers)` as
   * the session window takes them; `detail` is its `GET /api/sessions/{id}`
   * answer, if one came (`live`, `plugins`); `live` what is known of its
   * liveness without one; `onChange()` after every change of the window or
   * of the facts; `tools` what its renderers may do on it (messages.js
   * `ctx.session`), or null.
   */
  constructor({ id, fetchEvents, openLive, live = null, detail = null, timers, onChange, tools = null }) {
    this.id = id;
    this.tools = tools;
    this.pending = new PendingMessages();
    this.stopping = false;
    this.facts = new SessionFacts({ live });
    if (detail !== null) this.facts.detail(detail, this.facts.version());
    this.window = new SessionWindow({
      fetchEvents,
      openLive,
      live: true,
      timers,
      onSignal: (frame) => {
        if (this.facts.signal(frame)) onChange();
      },
    });
    this.#unsubscribe = this.window.subscribe(() => onChange());
    this.window.start();
  }

  /** Ask the host again whether it is live and for its plugins' states. Resolves to true if anything changed. */
  async refreshDetail(api) {
    const asked = this.facts.version();
    return this.facts.detail(await api.getSession(this.id), asked);
  }

  close() {
    this.#unsubscribe();
    this.window.close();
  }

  /** What the header calls it: a session/title in the window, else the list's title, else a short id. */
  title(directory) {
    return latestTitle(this.window.snapshot().events) ?? directory.title(this.id) ?? shortId(this.id);
  }

  /**
   * Draw it. `view` is `{conversation, composer, follower, announcer,
   * transcript, t, lang, time, now}`. Returns `{snap, recovered, arrived,
   * live}`: `recovered` is true when the window just came back from a
   * reconnect (the host may have restarted); `arrived` the presented nodes
   * whose view came since the Session was opened; `live` false for a cold
   * Session (true or null otherwise).
   */
  draw({ conversation, composer, follower, announcer, transcript, t, lang, time, now }) {
    const snap = this.window.snapshot();
    const recovered = this.#lastStatus === "reconnecting" && snap.status === "live";
    this.#lastStatus = snap.status;
    if (snap.loaded) this.facts.grew(snap.hi);
    const cold = this.facts.live === false;
    this.pending.reconcile(snap.events, {
      lost: t("lostRestart"),
      turn: (error) => describeError(error) || t("lostTurn"),
    });
    const nodes = toNodes(snap.events, snap.views);
    const pending = this.pending.list();
    const running = !cold && snap.loaded && turnRunning(snap.events);
    composer.setRunning(running, this.stopping);
    let notice = "";
    if (cold && snap.loaded) notice = t("coldNotice");
    else if (snap.loaded && nodes.length === 0 && pending.length === 0) notice = t("emptyTranscript");
    const before = follower.measure();
    const previousLo = transcript.getAttribute("data-lo");
    conversation.render({
      nodes,
      pending,
      streaming: snap.streaming,
      reasoning: snap.reasoning,
      running,
      lang,
      time,
      now,
      hasOlder: snap.hasOlder,
      loadingOlder: snap.loadingOlder,
      notice,
      session: this.tools,
    });
    transcript.setAttribute("data-lo", String(snap.lo));
    transcript.setAttribute("data-status", cold && snap.status === "live" ? "cold" : snap.status);
    const lastSeq = nodes.at(-1)?.seq ?? null;
    const grew = lastSeq !== null && this.#lastSeq !== null && lastSeq > this.#lastSeq;
    this.#lastSeq = lastSeq ?? this.#lastSeq;
    follower.restore(before, { grew, prepended: previousLo !== null && Number(previousLo) > snap.lo });
    this.#announce(snap, nodes, announcer, t);
    return { snap, recovered, arrived: this.#arrivals(snap, nodes), live: this.facts.live };
  }

  /** Add `text` to the pending list (from the window's end); returns its id. */
  queue(text) {
    return this.pending.add(text, this.window.hi);
  }

  /** Make failed entry `id` pending again; returns its text, or null. */
  requeue(id) {
    return this.pending.retry(id, this.window.hi);
  }

  /**
   * POST pending entry `id`. A 202 leaves it queued (until its message/user
   * arrives); a failure marks it failed, with `offline` as the words for a
   * host that did not answer. Never throws.
   */
  async post(api, id, text, { timeZone, offline }) {
    try {
      const answer = await api.sendMessage(this.id, text, { timeZone });
      this.pending.queued(id, answer?.session?.length ?? null);
      this.facts.resumed();
      // Do not wait for the reconnect backoff if the stream is down.
      if (this.window.status === "reconnecting") this.window.resync();
      return true;
    } catch (err) {
      const network = err?.status === 0;
      const doubt = network || err?.status >= 500;
      this.pending.failed(id, network ? offline : (err?.message ?? String(err)), doubt ? "error" : "rejected");
      return false;
    }
  }

  /**
   * Ask the host to end the running turn: resolves to whether one was
   * running, or null when a stop is already in flight; a refusal rejects.
   */
  async stop(api) {
    if (this.stopping) return null;
    this.stopping = true;
    try {
      return Boolean((await api.cancel(this.id))?.cancelled);
    } finally {
      this.stopping = false;
    }
  }

  /**
   * After a reconnect (the host may have restarted): ask it again whether
   * the Session is live and for its plugins' states; a message it had only
   * queued is gone if the Session is cold now (no agent holds it). Resolves
   * to true if anything changed.
   */
  async recover(api, message) {
    const asked = this.facts.version();
    const detail = await api.getSession(this.id);
    const changed = this.facts.detail(detail, asked);
    const lost = detail?.live === false && this.pending.lost(message);
    return changed || lost;
  }

  /**
   * Presented nodes whose view arrived after the Session was first drawn,
   * each once (an older page's views are history, not news).
   */
  #arrivals(snap, nodes) {
    if (!snap.loaded) return [];
    if (this.#arrivalFloor === null) {
      this.#arrivalFloor = snap.hi;
      return [];
    }
    const arrived = [];
    for (const node of nodes) {
      if (node.kind !== "presented" || node.seq < this.#arrivalFloor || this.#arrived.has(node.seq)) continue;
      this.#arrived.add(node.seq);
      arrived.push(node);
    }
    return arrived;
  }

  /** New messages, read out once: never the history a Session opens with. */
  #announce(snap, nodes, announcer, t) {
    if (!snap.loaded) return;
    if (this.#announcedHi === null) {
      this.#announcedHi = snap.hi;
      return;
    }
    for (const node of nodes) {
      if (node.seq < this.#announcedHi) continue;
      const line = announcement(node, t);
      if (line !== null) announcer.announce(line);
    }
    this.#announcedHi = Math.max(this.#announcedHi, snap.hi);
  }
}
