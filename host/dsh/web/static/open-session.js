// The Session on screen: its session window, the reader's pending messages,
// and how one render of it goes — settle pending messages against the log,
// build the nodes, show Stop while a turn runs, keep the scroll position,
// and read new messages out.

import { announcement } from "./messages.js";
import { PendingMessages, describeError } from "./pending.js";
import { shortId } from "./session-list.js";
import { SessionWindow } from "./session-window.js";
import { latestTitle, toNodes, turnRunning } from "./transcript.js";

export class OpenSession {
  #unsubscribe;
  #lastStatus = null;
  #lastSeq = null;
  #announcedHi = null;
  #lastLive = null;

  /**
   * Follow Session `id`: `fetchEvents(params)` and `openLive(handlers)` as
   * the session window takes them, `live` whether the Session is live now,
   * `onChange()` after every change of the window. With `openLive` the
   * window follows the live stream even while the Session is cold: the host
   * may wake it (a reminder came due) and says so with a `live` frame.
   */
  constructor({ id, fetchEvents, openLive, live, timers, onChange }) {
    this.id = id;
    this.pending = new PendingMessages();
    this.stopping = false;
    const follow = typeof openLive === "function" || Boolean(live);
    this.window = new SessionWindow({ fetchEvents, openLive, live: follow, sessionLive: live, timers });
    this.#unsubscribe = this.window.subscribe(() => onChange());
    this.window.start();
  }

  /** True once per change of the Session's liveness the window was told of. */
  liveChanged(snap) {
    const changed = this.#lastLive !== null && snap.sessionLive !== this.#lastLive;
    this.#lastLive = snap.sessionLive;
    return changed;
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
   * transcript, t, lang, time, now}`. Returns `{snap, recovered}`:
   * `recovered` is true when the window just came back from a reconnect
   * (the host may have restarted).
   */
  draw({ conversation, composer, follower, announcer, transcript, t, lang, time, now }) {
    const snap = this.window.snapshot();
    const recovered = this.#lastStatus === "reconnecting" && snap.status === "live";
    this.#lastStatus = snap.status;
    this.pending.reconcile(snap.events, {
      lost: t("lostRestart"),
      turn: (error) => describeError(error) || t("lostTurn"),
    });
    const nodes = toNodes(snap.events, snap.views);
    const pending = this.pending.list();
    const running = snap.sessionLive && snap.loaded && turnRunning(snap.events);
    composer.setRunning(running, this.stopping);
    let notice = "";
    if (!snap.sessionLive && snap.loaded) notice = t("coldNotice");
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
    });
    transcript.setAttribute("data-lo", String(snap.lo));
    transcript.setAttribute("data-status", snap.status);
    const lastSeq = nodes.at(-1)?.seq ?? null;
    const grew = lastSeq !== null && this.#lastSeq !== null && lastSeq > this.#lastSeq;
    this.#lastSeq = lastSeq ?? this.#lastSeq;
    follower.restore(before, { grew, prepended: previousLo !== null && Number(previousLo) > snap.lo });
    this.#announce(snap, nodes, announcer, t);
    return { snap, recovered };
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
      // A message resumes a cold Session: follow it live from now on, and
      // do not wait for the reconnect backoff if the stream is down.
      this.window.setLive(true);
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
   * After a reconnect: a message the host had only queued is gone if the
   * Session is cold now (no agent holds it). Resolves to true if any was.
   */
  async checkLost(api, message) {
    if (!this.pending.list().some((item) => item.state === "queued")) return false;
    const detail = await api.getSession(this.id);
    return detail?.live === false && this.pending.lost(message);
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
