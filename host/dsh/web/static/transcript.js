// The transcript adapter: Session events (plus their views) become node
// descriptors, plain data the conversation view renders. No DOM here.
//
// Node kinds (every node carries `kind`, `seq` and `eventType`):
// - "user"        {text, source}                    a message/user event
// - "assistant"   {text, toolCalls: [{id, name, arguments, resultSeq, result}],
//                  reasoning, thoughtMs}                (see reasoning.js)
//                 a call's `result` is its tool/result node (below), drawn
//                 with the call in one disclosure, or null while it runs
// - "tool-result" {callId, name, ok, value?, error?, callSeq}: only for a
//                 result whose call is not in the window
// - "turn-error"  {error: {code, message}, retry}    a turn/end with status "error";
//                 `retry` is the text of the person's message that turn
//                 answered, while it is the latest turn (null once the person
//                 wrote again, or when that message is not in the window)
// - "presented"   {view, data, followup}             any event that has a view,
//                                                    keyed by its event type
// - "followup"    {text, source}                     a plugin's message (below)
//                                                    whose event is not shown
// Markers (session/end-seed, a successful turn/end) and plugin events without
// a view produce no node.
//
// A plugin's follow-up — a message/user whose `source.kind` is not "user"
// (a delivered reminder) — is never the person's own bubble. When its
// source names the event that delivered it (`source.dispatchSeq`) and that
// event is a presented node in the window, it is folded into that node as
// `followup: {seq, text, source, time}` (one card per delivery; the text the
// model was given goes behind a disclosure); otherwise it is a "followup"
// node of its own.

import { storedReasoning, thoughtMs } from "./reasoning.js";

/**
 * Turn `events` (ascending by seq) and `views` (a Map or a plain object keyed
 * by seq) into node descriptors, in event order.
 */
export function toNodes(events, views = new Map()) {
  const viewOf = viewLookup(views);
  const calls = new Map();
  const presented = new Map();
  const nodes = [];
  let previous = null;
  let asked = null; // the person's latest message, for a Retry of its failed turn
  let failed = null; // the latest turn error, until the person writes again
  for (const event of events) {
    const node = toNode(event, viewOf(event.seq));
    const before = previous;
    previous = event;
    if (node === null) continue;
    if (node.kind === "user") {
      asked = node.text;
      if (failed !== null) failed.retry = null;
      failed = null;
    } else if (node.kind === "turn-error") {
      node.retry = asked;
      asked = null;
      failed = node;
    }
    if (node.kind === "presented") {
      presented.set(node.seq, node);
    } else if (node.kind === "followup") {
      const card = presented.get(node.source.dispatchSeq);
      if (card !== undefined && card.followup === null) {
        card.followup = { seq: node.seq, text: node.text, source: node.source, time: node.time };
        continue;
      }
    } else if (node.kind === "assistant") {
      if (node.reasoning !== null) node.thoughtMs = thoughtMs(before, event);
      // An empty id links nothing: two malformed calls must not share a result.
      for (const call of node.toolCalls) if (call.id !== "") calls.set(call.id, { node, call });
    } else if (node.kind === "tool-result") {
      const owner = calls.get(node.callId);
      if (owner !== undefined && owner.call.result === null) {
        node.callSeq = owner.node.seq;
        owner.call.resultSeq = node.seq;
        owner.call.result = node;
        continue;
      }
    }
    nodes.push(node);
  }
  return nodes;
}

/**
 * True while a turn runs: the last message/user in `events` has no turn/end
 * after it (a session/end-seed also ends it: the lifecycle that ran it is over).
 */
export function turnRunning(events) {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const type = events[i].type;
    if (type === "turn/end" || type === "session/end-seed") return false;
    if (type === "message/user") return true;
  }
  return false;
}

/** The title of the newest session/title event in `events`, or null. */
export function latestTitle(events) {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const event = events[i];
    if (event.type === "session/title" && typeof event.data?.title === "string" && event.data.title.trim() !== "") {
      return event.data.title;
    }
  }
  return null;
}

/** The descriptor for one event, or null when the event is not shown. */
export function toNode(event, view) {
  const base = { seq: event.seq, eventType: event.type, time: event.time ?? null };
  if (view !== undefined && view !== null) {
    return { ...base, kind: "presented", view, data: event.data, followup: null };
  }
  const data = isObject(event.data) ? event.data : {};
  switch (event.type) {
    case "message/user": {
      const source = sourceOf(data.source);
      return { ...base, kind: source.kind === "user" ? "user" : "followup", text: text(data.text), source };
    }
    case "message/assistant":
      return {
        ...base,
        kind: "assistant",
        text: text(data.text),
        toolCalls: toolCalls(data),
        reasoning: storedReasoning(data),
        thoughtMs: null,
      };
    case "tool/result":
      return toolResult(base, data);
    case "turn/end":
      if (data.status !== "error") return null;
      return { ...base, kind: "turn-error", error: errorOf(data.error), retry: null };
    default:
      return null;
  }
}

function toolCalls(data) {
  if (!Array.isArray(data.toolCalls)) return [];
  return data.toolCalls.filter(isObject).map((call) => ({
    id: text(call.id),
    name: text(call.name),
    arguments: call.arguments ?? null,
    resultSeq: null,
    result: null,
  }));
}

function toolResult(base, data) {
  const node = {
    ...base,
    kind: "tool-result",
    callId: text(data.callId),
    name: text(data.name),
    callSeq: null,
  };
  if (isObject(data.error)) return { ...node, ok: false, error: errorOf(data.error) };
  return { ...node, ok: true, value: data.value ?? null };
}

function sourceOf(source) {
  if (!isObject(source)) return { kind: "user" };
  return { ...source, kind: typeof source.kind === "string" ? source.kind : "user" };
}

function errorOf(error) {
  if (!isObject(error)) return { code: "error", message: "" };
  return { code: text(error.code) || "error", message: text(error.message) };
}

function viewLookup(views) {
  if (views instanceof Map) return (seq) => views.get(seq);
  if (isObject(views)) return (seq) => views[String(seq)];
  return () => undefined;
}

function text(value) {
  return typeof value === "string" ? value : "";
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
