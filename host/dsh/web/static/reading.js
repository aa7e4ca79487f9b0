// Marking alerts read (`POST /api/sessions/{id}/read`): what the reader has
// seen — the open conversation in a visible, focused tab — or said Done to.
// The host keeps the marks (per data dir or database) and tells every page
// the new count, so this module only asks, once per mark: a mark that is not
// past one already asked (or in flight) is not sent again, and a failed one
// may be asked again at the next look.

export class ReadMarks {
  #markRead;
  #onError;
  #asked = new Map();

  /**
   * `markRead(id, throughSeq) -> Promise<{unread}>` (api.markRead);
   * `onError(err)` hears a failure other than an unknown Session.
   */
  constructor({ markRead, onError = () => {} }) {
    this.#markRead = markRead;
    this.#onError = onError;
  }

  /**
   * Mark Session `id` read through `throughSeq`. Resolves to the host's
   * answer, or null when nothing was sent (not past the last mark) or the
   * request failed.
   */
  async mark(id, throughSeq) {
    if (!Number.isSafeInteger(throughSeq) || throughSeq < 0) return null;
    const before = this.#asked.get(id) ?? -1;
    if (throughSeq <= before) return null;
    this.#asked.set(id, throughSeq);
    try {
      return await this.#markRead(id, throughSeq);
    } catch (err) {
      // Ask again next time, unless a newer mark went out meanwhile.
      if (this.#asked.get(id) === throughSeq) this.#asked.set(id, before);
      if (err?.status !== 404) this.#onError(err);
      return null;
    }
  }

  /** Forget what was asked (a new token, a restarted host: its marks may be older). */
  reset() {
    this.#asked.clear();
  }
}
