// The conversation view: draws transcript node descriptors into the
// transcript element, reusing the element of every node whose content did
// not change, with a separator at each new day (in the reader's zone), the
// reader's pending messages, a typing indicator while a turn runs, and a
// notice. Node elements come from messages.js; presented nodes go through
// the event-view registry with an expandable JSON fallback.
//
// Actions are delegated from the root: copy (a code block or a message),
// fork, and the pending messages' retry / edit / dismiss. From the keyboard
// the transcript is one tab stop: ↑/↓/Home/End move between messages, and
// Enter (or the context-menu key, Shift+F10) opens the focused message's
// menu of the same actions.

import { isolate } from "./bidi.js";
import { h } from "./dom.js";
import { translator } from "./i18n.js";
import { renderMarkdown } from "./markdown-dom.js";
import { buildNode, copyableText, forkSeq } from "./messages.js";
import { LiveReasoningBlock } from "./reasoning.js";

/** How long a copy button says "Copied". */
export const COPIED_MS = 1500;

export class ConversationView {
  #doc;
  #root;
  #registry;
  #callbacks;
  #timers;
  #copyText;
  #cache = new Map();
  #separators = new Map();
  #t = translator("en");
  #lang = "en";
  #time;
  #session = null;
  #loadOlder;
  #roving = null;
  #menu = null;
  #transient = new Map();
  #liveReasoning = new LiveReasoningBlock();

  /**
   * Options: `document`, `root` (the `[data-role=transcript]` element),
   * `registry`, `timers` ({setTimeout, clearTimeout}), `copyText(text) ->
   * Promise<bool>`, and callbacks `onFork(seq)` (fork through `seq`),
   * `onRetry(text)` (a failed turn's Retry: send the person's `text` again),
   * `onLoadOlder()`, `onPending(action, id)` ("retry", "edit", "dismiss"),
   * `onRenderError(err, node)`.
   */
  constructor({
    document,
    root,
    registry,
    timers = globalThis,
    copyText = async () => false,
    onFork = () => {},
    onRetry = () => {},
    onLoadOlder = () => {},
    onPending = () => {},
    onRenderError = () => {},
  }) {
    this.#doc = document;
    this.#root = root;
    this.#registry = registry;
    this.#timers = timers;
    this.#copyText = copyText;
    this.#callbacks = { onFork, onLoadOlder, onPending, onRenderError, onRetry };
    this.#loadOlder = h(document, "button", { type: "button", class: "load-older", "data-role": "load-older" });
    this.#loadOlder.addEventListener("click", () => this.#callbacks.onLoadOlder());
    root.addEventListener("click", (event) => this.#click(event));
    root.addEventListener("keydown", (event) => this.#key(event));
    root.addEventListener("focusin", (event) => this.#focusIn(event));
  }

  /**
   * Draw the transcript. `state` is `{nodes, pending, streaming, reasoning,
   * running, lang, time, now, hasOlder, loadingOlder, notice, session}`;
   * `reasoning` is the live reasoning (`{text, ms}`), if any; `time` is a
   * createTimeFormat() (a new one, or a new `lang`, redraws every node);
   * `session` what renderers may do on the Session shown (messages.js
   * `buildNode`'s `ctx.session`: a new one redraws every node, since a
   * fork's copied events look the same as its parent's).
   */
  render(state) {
    const lang = state.lang ?? "en";
    const session = state.session ?? null;
    if (lang !== this.#lang || state.time !== this.#time || session !== this.#session) {
      this.#lang = lang;
      this.#t = translator(lang);
      this.#time = state.time;
      this.#session = session;
      this.#cache.clear();
      this.#separators.clear();
      this.#transient.clear();
    }
    const t = this.#t;
    const children = [];
    if (state.hasOlder || state.loadingOlder) {
      this.#loadOlder.textContent = t(state.loadingOlder ? "loadingOlder" : "loadOlder");
      if (state.loadingOlder) this.#loadOlder.setAttribute("disabled", "");
      else this.#loadOlder.removeAttribute("disabled");
      children.push(this.#loadOlder);
    }
    const next = new Map();
    const messages = [];
    let day = null;
    for (const node of state.nodes) {
      const separator = this.#separator(node, day, state.now ?? Date.now());
      if (separator !== null) {
        day = separator.key;
        children.push(separator.element);
      }
      const entry = this.#entry(node);
      next.set(node.seq, entry);
      children.push(entry.element);
      if (entry.element.hasAttribute("data-message")) messages.push(entry);
    }
    this.#cache = next;
    const transient = new Map();
    const keep = (key, build) => {
      const element = this.#transient.get(key) ?? build();
      transient.set(key, element);
      children.push(element);
    };
    for (const item of state.pending ?? []) keep(`pending:${JSON.stringify(item)}`, () => this.#pendingElement(item));
    // The live reasoning block is one element, updated in place, so that a
    // reader who opened it keeps it open while it grows.
    const reasoning = this.#liveReasoning.element(this.#doc, t, state.reasoning ?? null);
    if (state.running || state.streaming || reasoning !== null) {
      const text = state.streaming ?? "";
      keep(`typing:${reasoning === null ? "" : "reasoning"}:${text}`, () => this.#typingElement(text, reasoning));
    }
    if (state.notice) {
      keep(`notice:${state.notice}`, () => h(this.#doc, "p", { class: "notice", "data-role": "notice" }, [state.notice]));
    }
    this.#transient = transient;
    if (this.#menu !== null && next.get(this.#menu.seq)?.element !== this.#menu.owner) this.#menu = null;
    this.#place(children);
    this.#applyRoving(messages);
  }

  /**
   * Make `children` the root's children, touching only what changed: an
   * element already in place stays put (keeping its focus, its text
   * selection and the reader's scroll anchor), stale ones are removed and
   * new ones inserted where they belong.
   */
  #place(children) {
    const root = this.#root;
    const wanted = new Set(children);
    let cursor = root.firstChild;
    for (const child of children) {
      while (cursor !== null && !wanted.has(cursor)) {
        const stale = cursor;
        cursor = cursor.nextSibling;
        stale.remove();
      }
      if (child === cursor) cursor = cursor.nextSibling;
      else root.insertBefore(child, cursor);
    }
    while (cursor !== null) {
      const stale = cursor;
      cursor = cursor.nextSibling;
      stale.remove();
    }
  }

  /** Focus the message at `seq` (it becomes the transcript's tab stop). */
  focusMessage(seq) {
    const entry = this.#cache.get(seq);
    if (entry === undefined || !entry.element.hasAttribute("data-message")) return false;
    entry.element.focus?.();
    return true;
  }

  // ---- nodes ------------------------------------------------------------

  #entry(node) {
    // A presented node is drawn by whichever renderer its event type has at
    // the time: one registered later (a UI plugin whose module loaded after
    // the Session was opened) must replace the fallback, so it is part of
    // the signature.
    const renderer = node.kind === "presented" ? (this.#registry?.ownerOf?.(node.eventType) ?? null) : null;
    const signature = JSON.stringify([renderer, node]);
    const cached = this.#cache.get(node.seq);
    if (cached !== undefined && cached.signature === signature) return cached;
    const element = buildNode(node, {
      document: this.#doc,
      t: this.#t,
      lang: this.#lang,
      time: this.#time,
      timeZone: this.#time?.timeZone,
      locale: this.#time?.locale,
      registry: this.#registry,
      session: this.#session,
      onRenderError: (err, failed) => this.#callbacks.onRenderError(err, failed),
    });
    return { signature, element, node };
  }

  #separator(node, day, now) {
    if (!Number.isFinite(node.time) || this.#time === undefined) return null;
    const key = this.#time.dayKey(node.time);
    if (key === day) return null;
    const label = this.#time.dayLabel(node.time, now, this.#t);
    const id = `${key}|${label}`;
    let element = this.#separators.get(id);
    if (element === undefined) {
      element = h(this.#doc, "div", { class: "day-separator", "data-role": "day-separator", "data-day": key }, [
        h(this.#doc, "span", {}, [label]),
      ]);
      this.#separators.set(id, element);
    }
    return { key, element };
  }

  #pendingElement(item) {
    const doc = this.#doc;
    const t = this.#t;
    const status = {
      sending: t("pending"),
      queued: t("queued"),
      failed: t(item.reason === "lost" || item.reason === "turn" ? "notStored" : "failed", { message: item.error ?? "" }),
    }[item.state];
    const children = [
      h(doc, "div", { class: "meta" }, [h(doc, "span", { class: "who" }, [t("you")])]),
      isolate(h(doc, "div", { class: "bubble" }, [item.text])),
      h(doc, "div", { class: "pending-status", role: item.state === "failed" ? "alert" : undefined }, [status]),
    ];
    if (item.state === "failed") {
      const button = (action, label, primary = false) =>
        h(doc, "button", { type: "button", class: primary ? "primary small" : "link", "data-action": action }, [t(label)]);
      children.push(
        h(doc, "div", { class: "pending-actions" }, [
          button("retry", "retry", true),
          button("edit", "edit"),
          button("dismiss", "dismiss"),
        ]),
      );
    }
    return h(doc, "div", {
      class: `node node-user node-pending pending-${item.state}`,
      "data-role": "pending",
      "data-pending-id": item.id,
      "data-state": item.state,
    }, children);
  }

  /** The assistant at work: its live reasoning, then what it has written, else dots. */
  #typingElement(text, reasoning) {
    const doc = this.#doc;
    const t = this.#t;
    let body = null;
    if (text !== "") {
      body = renderMarkdown(doc, text, { t, streaming: true });
      body.setAttribute("class", "bubble md");
    } else if (reasoning === null) {
      body = h(doc, "div", { class: "typing-dots", "aria-hidden": "true" }, [h(doc, "span"), h(doc, "span"), h(doc, "span")]);
    }
    return h(doc, "div", { class: "node node-assistant node-typing", "data-role": "typing" }, [
      h(doc, "div", { class: "meta" }, [h(doc, "span", { class: "who" }, [`${t("assistant")} · ${t("typing")}`])]),
      reasoning,
      body,
    ]);
  }

  // ---- actions ----------------------------------------------------------

  #click(event) {
    const target = event.target;
    const button = target?.closest?.("[data-action]");
    if (!button || !this.#root.contains(button)) return;
    const action = button.getAttribute("data-action");
    const pending = button.closest("[data-pending-id]");
    if (pending !== null) {
      this.#callbacks.onPending(action, Number(pending.getAttribute("data-pending-id")));
      return;
    }
    if (action === "retry") {
      const holder = button.closest("[data-seq]");
      const node = holder === null ? undefined : this.#cache.get(Number(holder.getAttribute("data-seq")))?.node;
      if (node?.kind === "turn-error" && typeof node.retry === "string") this.#callbacks.onRetry(node.retry);
      return;
    }
    if (action === "copy") {
      const code = button.closest("[data-role=code-block]")?.querySelector("pre code");
      if (code) this.#copy(button, code.textContent);
      return;
    }
    const entry = this.#nodeOf(button);
    if (entry === undefined) return;
    if (action === "copy-message") {
      const text = copyableText(entry.node);
      if (text !== null) this.#copy(button, text);
    } else if (action === "fork") {
      this.#callbacks.onFork(forkSeq(entry.node));
    }
    if (this.#menu !== null && button.closest("[data-role=message-menu]") !== null) this.#closeMenu(true);
  }

  #nodeOf(element) {
    const holder = element.closest("[data-message]");
    if (holder === null) return undefined;
    return this.#cache.get(Number(holder.getAttribute("data-seq")));
  }

  async #copy(button, text) {
    const t = this.#t;
    let copied = false;
    try {
      copied = await this.#copyText(text);
    } catch {
      copied = false;
    }
    const label = button.textContent;
    button.textContent = copied ? t("copied") : t("copyFailed");
    button.setAttribute("data-copied", copied ? "true" : "false");
    this.#timers.setTimeout(() => {
      button.textContent = label;
      button.removeAttribute("data-copied");
    }, COPIED_MS);
  }

  // ---- keyboard ---------------------------------------------------------

  #focusIn(event) {
    const holder = event.target?.closest?.("[data-message]");
    if (!holder || !this.#root.contains(holder)) return;
    const seq = Number(holder.getAttribute("data-seq"));
    if (seq === this.#roving) return;
    this.#roving = seq;
    this.#applyRoving([...this.#cache.values()].filter((entry) => entry.element.hasAttribute("data-message")));
  }

  #applyRoving(messages) {
    if (messages.length === 0) return;
    if (!messages.some((entry) => entry.node.seq === this.#roving)) this.#roving = messages.at(-1).node.seq;
    for (const entry of messages) entry.element.setAttribute("tabindex", entry.node.seq === this.#roving ? "0" : "-1");
  }

  #key(event) {
    const target = event.target;
    if (this.#menu !== null && target?.closest?.("[data-role=message-menu]")) {
      this.#menuKey(event);
      return;
    }
    if (!target?.hasAttribute?.("data-message")) return;
    const messages = [...this.#cache.values()].filter((entry) => entry.element.hasAttribute("data-message"));
    const index = messages.findIndex((entry) => entry.element === target);
    const moves = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: messages.length - 1 };
    if (Object.hasOwn(moves, event.key)) {
      const next = messages[moves[event.key]];
      if (next !== undefined) {
        event.preventDefault();
        next.element.focus?.();
      }
      return;
    }
    if (event.key === "Enter" || event.key === "ContextMenu" || (event.key === "F10" && event.shiftKey)) {
      event.preventDefault();
      this.#openMenu(messages[index]);
    }
  }

  #openMenu(entry) {
    this.#closeMenu(false);
    const doc = this.#doc;
    const t = this.#t;
    const item = (action, label) =>
      h(doc, "button", { type: "button", role: "menuitem", class: "menu-item", "data-action": action, tabindex: "-1" }, [label]);
    const items = [];
    if (copyableText(entry.node) !== null) items.push(item("copy-message", t("copyMessage")));
    items.push(item("fork", t("forkHere")));
    const menu = h(doc, "div", { class: "message-menu", role: "menu", "data-role": "message-menu", "aria-label": t("messageActions") }, items);
    entry.element.appendChild(menu);
    this.#menu = { seq: entry.node.seq, element: menu, owner: entry.element };
    items[0].focus?.();
  }

  #menuKey(event) {
    const items = [...this.#menu.element.querySelectorAll("[role=menuitem]")];
    const index = items.indexOf(event.target);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      items[(index + step + items.length) % items.length].focus?.();
    } else if (event.key === "Escape" || event.key === "Tab") {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation?.();
      }
      this.#closeMenu(event.key === "Escape");
    }
  }

  #closeMenu(refocus) {
    if (this.#menu === null) return;
    const { element, owner } = this.#menu;
    this.#menu = null;
    element.remove();
    if (refocus) owner.focus?.();
  }
}
