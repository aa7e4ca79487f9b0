// The panels slot: `[data-role=panels]`, above the transcript, where UI
// plugins' panels (registry.registerPanel) show the open Session's plugin
// state — the reminders panel is one. Each panel is mounted when a Session
// is opened (or when its plugin's module arrives, if later: `adopt()`) and
// destroyed when another one is; `update(props)` is called
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
  #tried = new Set(); // ids of the panels mounted (or that failed to) for this Session
  #sessionId = null;
  #signature = null;
  #props = null;

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
    this.#mountNew();
  }

  /**
   * Mount the panels registered since the Session was opened (a UI plugin
   * whose module arrived after the reader opened a conversation), in the
   * registry's order among the ones already there, and give them the last
   * props. Panels already mounted keep their state; one that failed is not
   * tried again for this Session.
   */
  adopt() {
    if (this.#sessionId === null) return;
    const fresh = this.#mountNew();
    if (this.#props === null) return;
    for (const entry of fresh) this.#give(entry, this.#props);
    this.#show();
  }

  /** Mount the registered panels not tried yet for this Session; returns the new entries. */
  #mountNew() {
    const sessionId = this.#sessionId;
    const fresh = [];
    const session = {
      document: this.#doc,
      act: (plugin, action, args) => this.#host.act(sessionId, plugin, action, args),
      resume: () => this.#host.resume(sessionId),
      matches: (query) => this.#host.matches?.(query) === true,
      onError: (err) => this.#onError(err),
    };
    const registered = this.#registry?.panels?.() ?? [];
    for (const panel of registered) {
      if (this.#tried.has(panel.id)) continue;
      this.#tried.add(panel.id);
      try {
        const mounted = panel.mount({ ...session, storage: this.#keys(panel.id) });
        if (!mounted || typeof mounted.update !== "function" || typeof mounted.element?.nodeType !== "number") {
          throw new TypeError(`${panel.owner}: panel ${panel.id} mount() must return {element, update(props)}`);
        }
        mounted.element.setAttribute("data-panel", panel.id);
        fresh.push({ panel, mounted });
      } catch (err) {
        this.#onError(err);
      }
    }
    const order = new Map(registered.map((panel, index) => [panel.id, index]));
    this.#mounted = [...this.#mounted, ...fresh].sort((a, b) => order.get(a.panel.id) - order.get(b.panel.id));
    this.element.replaceChildren(...this.#mounted.map(({ mounted }) => mounted.element));
    this.#show();
    return fresh;
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
    this.#props = props;
    for (const entry of [...this.#mounted]) this.#give(entry, props);
    this.#show();
  }

  #give(entry, props) {
    try {
      entry.mounted.update(props);
    } catch (err) {
      this.#onError(err);
      this.#drop(entry);
    }
  }

  /** Destroy every panel (no Session is open). */
  clear() {
    for (const entry of this.#mounted) this.#destroy(entry);
    this.#mounted = [];
    this.#tried = new Set();
    this.#sessionId = null;
    this.#signature = null;
    this.#props = null;
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
