// The panels slot: `[data-role=panels]`, above the transcript, where UI
// plugins' panels (registry.registerPanel) show the open Session's plugin
// state — the reminders panel is one. Each panel is mounted when a Session
// is opened and destroyed when another one is; `update(props)` is called
// whenever the facts, the language or the clock change. A panel that throws
// costs only itself: it is removed and the error reported.

import { h } from "./dom.js";

export class PanelSlot {
  #doc;
  #registry;
  #host;
  #onError;
  #storage;
  #mounted = [];
  #sessionId = null;
  #signature = null;

  /**
   * `registry` lists the panels; `host` is what each panel's `mount` gets
   * besides `document`: `{act(plugin, action, args), resume()}` bound to the
   * open Session by the caller, and `matches(query)` (whether a media query
   * matches: a panel may fit a phone). `onError(err)` hears a failing panel.
   * `storage` (localStorage, or null) keeps each panel's small choices (is it
   * open?) under `dsh.panel.<id>.<key>`.
   */
  constructor({ document, registry, host, onError = () => {}, storage = null }) {
    this.#doc = document;
    this.#registry = registry;
    this.#host = host;
    this.#onError = onError;
    this.#storage = storage;
    this.element = h(document, "div", { class: "panels", "data-role": "panels", hidden: true });
  }

  /** The Session whose panels are mounted, or null. */
  get sessionId() {
    return this.#sessionId;
  }

  /** True while some panel is mounted. */
  get active() {
    return this.#mounted.length > 0;
  }

  /** Mount every registered panel for Session `sessionId` (destroying the previous ones). */
  open(sessionId) {
    this.clear();
    this.#sessionId = sessionId;
    const session = {
      document: this.#doc,
      act: (plugin, action, args) => this.#host.act(sessionId, plugin, action, args),
      resume: () => this.#host.resume(sessionId),
      matches: (query) => this.#host.matches?.(query) === true,
      onError: (err) => this.#onError(err),
    };
    for (const panel of this.#registry?.panels?.() ?? []) {
      try {
        const mounted = panel.mount({ ...session, storage: this.#keys(panel.id) });
        if (!mounted || typeof mounted.update !== "function" || typeof mounted.element?.nodeType !== "number") {
          throw new TypeError(`${panel.owner}: panel ${panel.id} mount() must return {element, update(props)}`);
        }
        mounted.element.setAttribute("data-panel", panel.id);
        this.#mounted.push({ panel, mounted });
      } catch (err) {
        this.#onError(err);
      }
    }
    this.element.replaceChildren(...this.#mounted.map(({ mounted }) => mounted.element));
    this.#show();
  }

  /**
   * Give every panel `props` (`{sessionId, live, states, lang, timeZone,
   * locale, now}`); nothing happens when they equal the last ones.
   */
  update(props) {
    if (this.#sessionId === null || props.sessionId !== this.#sessionId) return;
    const signature = JSON.stringify(props);
    if (signature === this.#signature) return;
    this.#signature = signature;
    for (const entry of [...this.#mounted]) {
      try {
        entry.mounted.update(props);
      } catch (err) {
        this.#onError(err);
        this.#drop(entry);
      }
    }
    this.#show();
  }

  /** Destroy every panel (no Session is open). */
  clear() {
    for (const entry of this.#mounted) this.#destroy(entry);
    this.#mounted = [];
    this.#sessionId = null;
    this.#signature = null;
    this.element.replaceChildren();
    this.#show();
  }

  /** `{get(key), set(key, value)}` for panel `id`; a null value removes the key. */
  #keys(id) {
    const storage = this.#storage;
    const name = (key) => `dsh.panel.${id}.${key}`;
    return Object.freeze({
      get(key) {
        try {
          return storage?.getItem(name(key)) ?? null;
        } catch {
          return null;
        }
      },
      set(key, value) {
        try {
          if (value === null || value === undefined) storage?.removeItem(name(key));
          else storage?.setItem(name(key), String(value));
        } catch {
          // Storage can be disabled: the choice lasts for this page only.
        }
      },
    });
  }

  #drop(entry) {
    this.#mounted = this.#mounted.filter((item) => item !== entry);
    this.#destroy(entry);
    entry.mounted.element.remove();
  }

  #destroy(entry) {
    try {
      entry.mounted.destroy?.();
    } catch (err) {
      this.#onError(err);
    }
  }

  #show() {
    const empty = this.#mounted.every(({ mounted }) => mounted.element.hasAttribute("hidden"));
    if (empty) this.element.setAttribute("hidden", "");
    else this.element.removeAttribute("hidden");
  }
}
