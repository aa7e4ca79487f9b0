// The conversation view: draws transcript node descriptors into a container,
// reusing the element of every node whose content did not change. Presented
// nodes go through the event-view registry; an unknown type, a renderer that
// throws or returns something that is not a node, all fall back to an
// expandable JSON dump of the view. All text is inserted as text.

import { append, h, isNode } from "./dom.js";
import { prettyJson } from "./json.js";
import { translator } from "./i18n.js";
import { LiveReasoningBlock, reasoningBlock } from "./reasoning.js";

/**
 * A view over `root` (the `[data-role=transcript]` element).
 *
 * Options: `document`, `root`, `registry`, and callbacks `onFork(seq)`,
 * `onLoadOlder()`, `onDismissPending(id)`, `onRenderError(err, node)`.
 */
export class ConversationView {
  #doc;
  #root;
  #registry;
  #callbacks;
  #cache = new Map();
  #lang = "en";
  #t = translator("en");
  #loadOlder;
  #liveReasoning = new LiveReasoningBlock();

  constructor({
    document,
    root,
    registry,
    onFork = () => {},
    onLoadOlder = () => {},
    onDismissPending = () => {},
    onRenderError = () => {},
  }) {
    this.#doc = document;
    this.#root = root;
    this.#registry = registry;
    this.#callbacks = { onFork, onLoadOlder, onDismissPending, onRenderError };
    this.#loadOlder = h(document, "button", {
      type: "button",
      class: "load-older",
      "data-role": "load-older",
    });
    this.#loadOlder.addEventListener("click", () => this.#callbacks.onLoadOlder());
  }

  /**
   * Draw the transcript. `state` is `{nodes, pending, streaming, reasoning,
   * lang, hasOlder, loadingOlder, notice}`; every field but `nodes` is
   * optional. `reasoning` is the live reasoning (`{text, ms}`), if any.
   */
  render(state) {
    const lang = state.lang ?? "en";
    if (lang !== this.#lang) {
      this.#lang = lang;
      this.#t = translator(lang);
      this.#cache.clear();
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
    for (const node of state.nodes) {
      const element = this.#nodeElement(node);
      next.set(node.seq, this.#cache.get(node.seq));
      children.push(element);
    }
    this.#cache = next;
    for (const item of state.pending ?? []) children.push(this.#pendingElement(item));
    if (state.streaming || state.reasoning) {
      children.push(this.#typingElement(state.streaming ?? "", state.reasoning ?? null));
    }
    if (state.notice) {
      children.push(h(this.#doc, "p", { class: "notice", "data-role": "notice" }, [state.notice]));
    }
    this.#root.replaceChildren(...children);
  }

  // ---- event nodes ----------------------------------------------------

  #nodeElement(node) {
    const signature = JSON.stringify(node);
    const cached = this.#cache.get(node.seq);
    if (cached !== undefined && cached.signature === signature) return cached.element;
    const element = this.#build(node);
    this.#cache.set(node.seq, { signature, element });
    return element;
  }

  #build(node) {
    switch (node.kind) {
      case "user":
        return this.#message(node, "user", node.text, this.#userMeta(node));
      case "assistant":
        return this.#assistant(node);
      case "tool-result":
        return this.#toolResult(node);
      case "turn-error":
        return this.#turnError(node);
      case "presented":
        return this.#presented(node);
      default:
        return this.#shell(node, "unknown", [this.#jsonFallback(node.eventType, node)]);
    }
  }

  /** The common wrapper: `[data-seq][data-event-type]`, with a fork button. */
  #shell(node, kind, children, attrs = {}) {
    const doc = this.#doc;
    const fork = h(doc, "button", {
      type: "button",
      class: "fork",
      "data-role": "fork",
      title: this.#t("forkHere"),
      "aria-label": this.#t("forkHere"),
    }, [this.#t("fork")]);
    fork.addEventListener("click", () => this.#callbacks.onFork(node.seq));
    const element = h(doc, "div", {
      class: `node node-${kind}`,
      "data-seq": node.seq,
      "data-event-type": node.eventType,
      ...attrs,
    });
    if (Number.isFinite(node.time)) element.setAttribute("title", localTime(node.time, this.#lang));
    return append(doc, element, [...children, fork]);
  }

  #message(node, kind, text, meta) {
    const doc = this.#doc;
    return this.#shell(node, kind, [
      h(doc, "div", { class: "who" }, [meta]),
      h(doc, "div", { class: "bubble" }, [text]),
    ]);
  }

  #userMeta(node) {
    const source = node.source?.kind ?? "user";
    if (source === "user") return this.#t("you");
    return `${this.#t("you")} · ${this.#t("fromPlugin", { source })}`;
  }

  #assistant(node) {
    const doc = this.#doc;
    const t = this.#t;
    const children = [h(doc, "div", { class: "who" }, [t("assistant")])];
    if (node.reasoning) children.push(reasoningBlock(doc, t, { text: node.reasoning, ms: node.thoughtMs }));
    if (node.text !== "") children.push(h(doc, "div", { class: "bubble" }, [node.text]));
    if (node.toolCalls.length > 0) {
      const list = h(doc, "ul", { class: "tool-calls" });
      for (const call of node.toolCalls) {
        const state = call.resultSeq === null ? "pending" : "done";
        const item = h(doc, "li", {
          class: `tool-call tool-call-${state}`,
          "data-call-id": call.id,
          "data-result-seq": call.resultSeq ?? undefined,
        });
        const details = h(doc, "details", {}, [
          h(doc, "summary", {}, [
            t("toolCall", { name: call.name }),
            call.resultSeq === null ? h(doc, "span", { class: "hint" }, [` · ${t("noResult")}`]) : null,
          ]),
          h(doc, "div", { class: "label" }, [t("arguments")]),
          h(doc, "pre", { class: "json" }, [prettyJson(call.arguments)]),
        ]);
        list.appendChild(append(doc, item, [details]));
      }
      children.push(list);
    }
    return this.#shell(node, "assistant", children);
  }

  #toolResult(node) {
    const doc = this.#doc;
    const t = this.#t;
    const summary = node.ok ? t("toolResult", { name: node.name }) : t("toolError", { name: node.name });
    const body = node.ok
      ? h(doc, "pre", { class: "json" }, [prettyJson(node.value)])
      : h(doc, "p", { class: "error-text" }, [`${node.error.code}: ${node.error.message}`]);
    const details = h(doc, "details", { class: node.ok ? "result" : "result result-error" }, [
      h(doc, "summary", {}, [summary]),
      body,
    ]);
    return this.#shell(node, "tool-result", [details], {
      "data-call-id": node.callId,
      "data-call-seq": node.callSeq ?? undefined,
    });
  }

  #turnError(node) {
    const message = node.error.message === "" ? node.error.code : `${node.error.code}: ${node.error.message}`;
    return this.#shell(node, "turn-error", [
      h(this.#doc, "p", { class: "error-text", role: "alert" }, [this.#t("turnError", { message })]),
    ]);
  }

  #presented(node) {
    const render = this.#registry?.lookup(node.eventType);
    let content = null;
    if (render !== undefined) {
      const event = { seq: node.seq, type: node.eventType, time: node.time, data: node.data };
      const ctx = {
        document: this.#doc,
        lang: this.#lang,
        t: this.#t,
        seq: node.seq,
        eventType: node.eventType,
      };
      try {
        const output = render(node.view, event, ctx);
        if (isNode(output)) content = output;
        else this.#callbacks.onRenderError(new TypeError(`renderer for ${node.eventType} returned no node`), node);
      } catch (err) {
        this.#callbacks.onRenderError(err, node);
      }
    }
    content ??= this.#jsonFallback(node.eventType, node.view);
    return this.#shell(node, "presented", [content], { "data-view": node.eventType });
  }

  #jsonFallback(eventType, value) {
    const doc = this.#doc;
    return h(doc, "details", { class: "json-fallback", "data-role": "json-fallback" }, [
      h(doc, "summary", {}, [this.#t("rawEvent", { type: eventType })]),
      h(doc, "pre", { class: "json" }, [prettyJson(value)]),
    ]);
  }

  // ---- transient nodes --------------------------------------------------

  #pendingElement(item) {
    const doc = this.#doc;
    const t = this.#t;
    const status =
      item.state === "failed"
        ? t("failed", { message: item.error ?? "" })
        : t(item.state === "queued" ? "queued" : "pending");
    const element = h(doc, "div", {
      class: `node node-user node-pending pending-${item.state}`,
      "data-role": "pending",
      "data-pending-id": item.id,
    }, [
      h(doc, "div", { class: "who" }, [t("you")]),
      h(doc, "div", { class: "bubble" }, [item.text]),
      h(doc, "div", { class: "status" }, [status]),
    ]);
    if (item.state === "failed") {
      const dismiss = h(doc, "button", { type: "button", class: "dismiss", "data-role": "dismiss" }, [
        t("dismiss"),
      ]);
      dismiss.addEventListener("click", () => this.#callbacks.onDismissPending(item.id));
      element.appendChild(dismiss);
    }
    return element;
  }

  #typingElement(text, reasoning) {
    const doc = this.#doc;
    return h(doc, "div", { class: "node node-assistant node-typing", "data-role": "typing" }, [
      h(doc, "div", { class: "who" }, [`${this.#t("assistant")} · ${this.#t("typing")}`]),
      this.#liveReasoning.element(doc, this.#t, reasoning),
      text === "" ? null : h(doc, "div", { class: "bubble" }, [text]),
    ]);
  }
}

function localTime(ms, lang) {
  return new Date(ms).toLocaleString(lang === "zh" ? "zh-CN" : undefined);
}
