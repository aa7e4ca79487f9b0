// The Session directory: what the host lists (filtered by the search box),
// the titles seen so far, and the list actions — rename and delete — with
// their failures turned into words for the banner.

import { isUnsupported } from "./api.js";

export class SessionDirectory {
  #api;
  #report;
  #unsupported;
  #listeners = new Set();
  #request = 0;
  sessions = [];
  query = "";
  titles = new Map();

  /**
   * `api` (createApi, or null), `report(err)` for a failed request and
   * `unsupported(feature, err)` for a host that lacks a route.
   */
  constructor({ api, report, unsupported }) {
    this.#api = api;
    this.#report = report;
    this.#unsupported = unsupported;
  }

  /** Call `listener()` after every change; returns the unsubscribe function. */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Ask the host for the list (with the current query); a newer request wins.
   * A `background` read (a live frame, the poll, a tab shown again) that cannot
   * reach the host says nothing: the connection state already says so.
   */
  async refresh({ background = false } = {}) {
    if (this.#api === null) return;
    this.#request += 1;
    const asked = this.#request;
    const query = this.query;
    try {
      let listed = await this.#api.listSessions(query === "" ? {} : { q: query });
      if (asked !== this.#request) return;
      // A host without titles cannot search them: narrow its answer by id.
      if (query !== "" && !listed.some((session) => Object.hasOwn(session, "title"))) {
        listed = listed.filter((session) => String(session.id).toLowerCase().includes(query.toLowerCase()));
      }
      this.sessions = listed;
      for (const session of listed) this.#remember(session);
      this.#emit();
    } catch (err) {
      if (background && err?.status === 0) return;
      if (asked === this.#request) this.#report(err);
    }
  }

  search(text) {
    this.query = String(text ?? "").trim();
    return this.refresh();
  }

  /** A Session the reader just made (created or forked): listed first. */
  add(summary) {
    this.sessions = [summary, ...this.sessions.filter((item) => item.id !== summary.id)];
    this.#remember(summary);
    this.#emit();
  }

  find(id) {
    return this.sessions.find((session) => session.id === id);
  }

  /** The newest title known for `id`, or undefined. */
  title(id) {
    return this.titles.get(id);
  }

  /**
   * Raise the listed event count of `id` to `length` (what its window
   * shows). Returns true if it changed; listeners are not called (the caller
   * is drawing already).
   */
  syncLength(id, length) {
    const summary = this.find(id);
    if (summary === undefined || (summary.length ?? 0) >= length) return false;
    this.sessions = this.sessions.map((session) => (session.id === id ? { ...session, length } : session));
    return true;
  }

  /**
   * Set the listed liveness of `id` to what its open window knows (a live
   * frame, a resume). Returns true if it changed; listeners are not called.
   */
  syncLive(id, live) {
    const summary = this.find(id);
    if (summary === undefined || summary.live === live) return false;
    this.sessions = this.sessions.map((session) => (session.id === id ? { ...session, live } : session));
    return true;
  }

  /**
   * Set the listed unread count of `id` (a read mark's answer). Returns true
   * if it changed; listeners are not called.
   */
  syncUnread(id, unread) {
    const summary = this.find(id);
    if (summary === undefined || summary.unread === unread) return false;
    this.sessions = this.sessions.map((session) => (session.id === id ? { ...session, unread } : session));
    return true;
  }

  /** Rename through PATCH; resolves to true once the host took the title. */
  async rename(id, title) {
    if (this.#api === null) return false;
    try {
      const summary = await this.#api.renameSession(id, title);
      const named = typeof summary?.title === "string" ? summary.title : title;
      this.titles.set(id, named);
      this.sessions = this.sessions.map((session) =>
        session.id === id ? { ...session, ...summary, title: named } : session,
      );
      this.#emit();
      return true;
    } catch (err) {
      this.#fail("featureRename", err);
      return false;
    }
  }

  /** Delete through DELETE; resolves to true once the host removed it from the list. */
  async remove(id) {
    if (this.#api === null) return false;
    try {
      await this.#api.deleteSession(id);
    } catch (err) {
      this.#fail("featureDelete", err);
      return false;
    }
    this.sessions = this.sessions.filter((session) => session.id !== id);
    this.titles.delete(id);
    this.#emit();
    this.refresh();
    return true;
  }

  /**
   * Bring a deleted Session back through POST …/restore (the Undo of a
   * delete); resolves to true once the host restored it, and the list is
   * read again.
   */
  async restore(id) {
    if (this.#api === null) return false;
    let summary;
    try {
      summary = await this.#api.restoreSession(id);
    } catch (err) {
      this.#fail("featureRestore", err);
      return false;
    }
    this.#remember(summary);
    await this.refresh();
    return true;
  }

  #remember(summary) {
    if (typeof summary?.title === "string" && summary.title.trim() !== "") this.titles.set(summary.id, summary.title);
  }

  #fail(feature, err) {
    if (isUnsupported(err)) this.#unsupported(feature, err);
    else this.#report(err);
  }

  #emit() {
    for (const listener of [...this.#listeners]) listener();
  }
}
