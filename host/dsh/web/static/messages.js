// One transcript node descriptor (transcript.js) as DOM. Every event node is
// `[data-seq][data-event-type]`; messages (the person's, the assistant's, a
// plugin's presented event) are `[data-message]` articles with a meta line
// (who, and the time on hover) and a small action bar (copy, fork) whose
// buttons are not tab stops: the conversation view offers the same actions
// from the keyboard through its message menu. Assistant text is markdown;
// everything else is inserted as text. A plugin's follow-up message (a
// delivered reminder's text for the model) is never drawn as the person's
// bubble: it is a closed disclosure, inside the card of the event that
// delivered it when there is one. A failure (a tool's, a turn's) is a
// sentence in the reader's language — a plugin words its own tools'
// (registry.registerToolError) — with the raw code in a closed "Details for
// developers" disclosure. A failed turn says what happened in plain words when
// its code is one a person can act on (the model could not be reached), and,
// while it is the latest turn, offers Retry: the person's message sent again.

import { isolate } from "./bidi.js";
import { append, h, isNode } from "./dom.js";
import { prettyJson } from "./json.js";
import { renderMarkdown } from "./markdown-dom.js";
import { reasoningBlock } from "./reasoning.js";

/**
 * Build the element of `node`. `ctx` is `{document, t, time, registry,
 * lang, locale, timeZone, session, onRenderError(err, node)}` (`time` from
 * createTimeFormat; `session`, when the host offers it, is what a renderer
 * may do on the Session shown: `{id, act(plugin, action, args),
 * markRead(throughSeq), state(plugin), onError(err)}`).
 */
export function buildNode(node, ctx) {
  switch (node.kind) {
    case "user":
      return userMessage(node, ctx);
    case "followup":
      return followupMessage(node, ctx);
    case "assistant":
      return assistantMessage(node, ctx);
    case "tool-result":
      return eventNode(ctx, node, "tool-result", toolBody(ctx, { name: node.name, arguments: undefined }, node), {
        "data-call-id": node.callId,
      });
    case "turn-error":
      return turnError(node, ctx);
    case "presented":
      return presented(node, ctx);
    default:
      return eventNode(ctx, node, "unknown", [jsonFallback(ctx, node.eventType, node)]);
  }
}

/** The text the copy action copies for `node` (markdown source for the assistant), or null. */
export function copyableText(node) {
  return node.kind === "user" || node.kind === "assistant" ? node.text : null;
}

/**
 * The seq a fork from `node` copies through: an assistant message keeps its
 * tool results, a card the follow-up folded into it.
 */
export function forkSeq(node) {
  if (node.kind === "presented" && node.followup) return Math.max(node.seq, node.followup.seq);
  if (node.kind !== "assistant") return node.seq;
  return Math.max(node.seq, ...node.toolCalls.map((call) => call.resultSeq ?? node.seq));
}

/** The line a screen reader hears when `node` arrives live, or null (tool internals are not read). */
export function announcement(node, t) {
  if (node.kind === "assistant" && node.text.trim() !== "") return `${t("assistant")}: ${node.text}`;
  if (node.kind === "followup") return t("followupFrom", { source: node.source.kind });
  if (node.kind === "turn-error") return turnErrorSentence(t, node.error);
  return null;
}

// ---- shells ---------------------------------------------------------------

function eventNode(ctx, node, kind, children, attrs = {}) {
  return h(ctx.document, "div", {
    class: `node node-${kind}`,
    "data-seq": node.seq,
    "data-event-type": node.eventType,
    ...attrs,
  }, children);
}

/** A message: an article the keyboard can reach, with meta line and actions. */
function message(ctx, node, kind, label, body, { copy = true, attrs = {}, shown = true } = {}) {
  const doc = ctx.document;
  const meta = h(doc, "div", { class: "meta" }, [shown ? h(doc, "span", { class: "who" }, [label]) : null, stamp(ctx, node.time)]);
  const element = eventNode(ctx, node, kind, [meta, ...body, actions(ctx, copy)], {
    "data-message": "",
    role: "article",
    tabindex: "-1",
    "aria-label": label,
    ...attrs,
  });
  return element;
}

function actions(ctx, copy) {
  const { document: doc, t } = ctx;
  const button = (action, text) =>
    h(doc, "button", { type: "button", class: `action action-${action}`, "data-action": action, tabindex: "-1", title: text }, [
      text,
    ]);
  return h(doc, "div", { class: "actions", "data-role": "message-actions" }, [
    copy ? button("copy-message", t("copy")) : null,
    button("fork", t("fork")),
  ]);
}

// A span, not <time>: a plugin's view inside a presented node owns the
// node's <time> elements (the reminder card's occurrence, for one).
function stamp(ctx, time) {
  if (!Number.isFinite(time) || ctx.time === undefined) return null;
  return h(ctx.document, "span", {
    class: "stamp",
    "data-role": "stamp",
    "data-time": new Date(time).toISOString(),
    title: ctx.time.full(time),
  }, [ctx.time.clock(time)]);
}

// ---- kinds ----------------------------------------------------------------

/**
 * The text a plugin gave the model (a reminder's frame), closed: the card
 * above it already says what happened, in the reader's language.
 */
export function followupDisclosure(doc, t, followup) {
  return h(doc, "details", { class: "followup", "data-role": "followup", "data-followup-seq": followup.seq }, [
    h(doc, "summary", {}, [t("followupSummary")]),
    isolate(h(doc, "pre", { class: "followup-text" }, [followup.text])),
  ]);
}

function followupMessage(node, ctx) {
  const label = ctx.t("followupFrom", { source: node.source.kind });
  const body = [followupDisclosure(ctx.document, ctx.t, node)];
  return message(ctx, node, "followup", label, body, { copy: false, attrs: { "data-source": node.source.kind } });
}

function userMessage(node, ctx) {
  // The person's own words are shown exactly as typed (no markdown), isolated (bidi.js).
  const bubble = isolate(h(ctx.document, "div", { class: "bubble" }, [node.text]));
  return message(ctx, node, "user", ctx.t("you"), [bubble]);
}

function assistantMessage(node, ctx) {
  const { document: doc, t } = ctx;
  const body = [];
  // Above the answer go blocks that explain it without being part of it
  // (the model's reasoning, collapsed); then the answer, then its tools.
  if (node.reasoning) body.push(reasoningBlock(doc, t, { text: node.reasoning, ms: node.thoughtMs }));
  if (node.text !== "") {
    const answer = renderMarkdown(doc, node.text, { t });
    answer.setAttribute("class", "bubble md");
    answer.setAttribute("data-role", "answer");
    body.push(answer);
  }
  if (node.toolCalls.length > 0) {
    body.push(
      h(doc, "ul", { class: "tool-calls" }, node.toolCalls.map((call) =>
        h(doc, "li", {
          class: `tool-call tool-call-${callState(call)}`,
          "data-call-id": call.id,
          "data-result-seq": call.resultSeq ?? undefined,
        }, toolBody(ctx, call, call.result)),
      )),
    );
  }
  return message(ctx, node, "assistant", t("assistant"), body, { copy: node.text !== "" });
}

function callState(call) {
  if (call.result === null) return "pending";
  return call.result.ok ? "done" : "error";
}

/**
 * A tool call as the page shows it: a failure's sentence (visible: the
 * person learns what did not happen), then the call in its disclosure.
 */
function toolBody(ctx, call, result) {
  const disclosure = toolDisclosure(ctx, call, result);
  if (result === null || result.ok) return [disclosure];
  return [h(ctx.document, "p", { class: "error-text", "data-role": "tool-error" }, [toolSentence(ctx, result)]), disclosure];
}

/**
 * A tool call and its result in one closed disclosure: the summary names the
 * tool and its state; inside, the arguments (when known) and the result.
 */
function toolDisclosure(ctx, call, result) {
  const { document: doc, t } = ctx;
  const state = result === null ? t("noResult") : result.ok ? t("toolDone") : t("toolFailed");
  const children = [
    h(doc, "summary", {}, [
      t("toolCall", { name: call.name }),
      h(doc, "span", { class: "tool-state" }, [` · ${state}`]),
    ]),
  ];
  if (call.arguments !== undefined) {
    children.push(h(doc, "div", { class: "label" }, [t("arguments")]), h(doc, "pre", { class: "json" }, [prettyJson(call.arguments)]));
  }
  if (result !== null) children.push(resultBlock(ctx, result));
  return h(doc, "details", { class: result !== null && !result.ok ? "tool result-error" : "tool" }, children);
}

function resultBlock(ctx, result) {
  const { document: doc, t } = ctx;
  const body = result.ok ? [h(doc, "pre", { class: "json" }, [prettyJson(result.value)])] : [errorDetails(ctx, result.error)];
  return h(doc, "div", {
    class: result.ok ? "tool-result" : "tool-result tool-result-error",
    "data-seq": result.seq,
    "data-event-type": result.eventType,
    "data-call-id": result.callId,
  }, [h(doc, "div", { class: "label" }, [result.ok ? t("result") : t("toolError", { name: result.name })]), ...body]);
}

/** `key`'s sentence about `error`: with its message, or the bare one when it has none. */
function sentence(t, key, error) {
  return error.message === "" ? t(`${key}Bare`) : t(key, { message: error.message });
}

/** A failed tool call in words: its plugin's (registry.registerToolError), else the host's. */
function toolSentence(ctx, result) {
  const describe = ctx.registry?.toolErrorFor?.(result.name);
  if (describe !== undefined) {
    try {
      const words = describe({ code: result.error.code, message: result.error.message }, { lang: ctx.lang });
      if (typeof words === "string" && words.trim() !== "") return words;
    } catch (err) {
      ctx.onRenderError(err, result);
    }
  }
  return sentence(ctx.t, "stepFailed", result.error);
}

/** The raw error, closed, for developers: its code (and the message as sent). */
function errorDetails(ctx, error) {
  const doc = ctx.document;
  const raw = error.message === "" ? error.code : `${error.code}: ${error.message}`;
  return h(doc, "details", { class: "error-details", "data-role": "error-details" }, [
    h(doc, "summary", {}, [ctx.t("errorDetails")]),
    h(doc, "code", { class: "error-code", "data-role": "error-code", title: ctx.t("errorCode") }, [raw]),
  ]);
}

/** Turn errors worded for a person by their code (the model's, `dsh.models.errors`). */
const TURN_ERROR_WORDS = Object.freeze({
  model_unavailable: "modelUnreachable",
  model_rate_limited: "modelRateLimited",
  model_auth_failed: "modelAuthFailed",
});

/** The sentence of a failed turn: one for its code when there is one, else the host's message. */
export function turnErrorSentence(t, error) {
  const key = Object.hasOwn(TURN_ERROR_WORDS, error.code) ? TURN_ERROR_WORDS[error.code] : null;
  return key !== null ? t(key) : sentence(t, "turnError", error);
}

function turnError(node, ctx) {
  const doc = ctx.document;
  const children = [h(doc, "p", { class: "error-text" }, [turnErrorSentence(ctx.t, node.error)])];
  if (typeof node.retry === "string" && node.retry.trim() !== "") {
    // Sends the person's message again: the host has no way to re-run a turn.
    children.push(
      h(doc, "div", { class: "turn-error-actions" }, [
        h(doc, "button", {
          type: "button",
          class: "primary small",
          "data-action": "retry",
          title: ctx.t("retryTurnHint"),
        }, [ctx.t("retry")]),
      ]),
    );
  }
  children.push(errorDetails(ctx, node.error));
  return eventNode(ctx, node, "turn-error", children);
}

function presented(node, ctx) {
  const render = ctx.registry?.lookup(node.eventType);
  const followup = node.followup ? followupDisclosure(ctx.document, ctx.t, node.followup) : null;
  let content = null;
  if (render !== undefined) {
    const event = { seq: node.seq, type: node.eventType, time: node.time, data: node.data };
    const rendererCtx = {
      document: ctx.document,
      lang: ctx.lang,
      t: ctx.t,
      seq: node.seq,
      eventType: node.eventType,
      time: ctx.time,
      timeZone: ctx.timeZone,
      locale: ctx.locale,
      followup: node.followup ? { ...node.followup, element: followup } : null,
      ...sessionTools(ctx.session),
    };
    try {
      const output = render(node.view, event, rendererCtx);
      if (isNode(output)) content = output;
      else ctx.onRenderError(new TypeError(`renderer for ${node.eventType} returned no node`), node);
    } catch (err) {
      ctx.onRenderError(err, node);
    }
  }
  content ??= jsonFallback(ctx, node.eventType, node.view);
  // A renderer may place the follow-up inside its card; else it goes below.
  const body = [content];
  if (followup !== null && followup.parentNode == null) body.push(followup);
  // The plugin's own card says what it is: the meta line only has the time.
  return message(ctx, node, "presented", ctx.t("pluginEvent", { type: node.eventType }), body, {
    copy: false,
    shown: false,
    attrs: { "data-view": node.eventType, "data-followup-seq": node.followup?.seq },
  });
}

/**
 * What a renderer may do on the Session shown (registry.js documents it);
 * nothing when the page shows none.
 */
function sessionTools(session) {
  if (session === null || session === undefined) return {};
  return {
    sessionId: session.id,
    act: (plugin, action, args) => session.act(plugin, action, args),
    markRead: (throughSeq) => session.markRead(throughSeq),
    pluginState: (plugin) => session.state(plugin),
    onError: (err) => session.onError(err),
  };
}

function jsonFallback(ctx, eventType, value) {
  const doc = ctx.document;
  return append(doc, h(doc, "details", { class: "json-fallback", "data-role": "json-fallback" }), [
    h(doc, "summary", {}, [ctx.t("rawEvent", { type: eventType })]),
    h(doc, "pre", { class: "json" }, [prettyJson(value)]),
  ]);
}
