import assert from "node:assert/strict";
import { test } from "node:test";

import { latestTitle, toNode, toNodes, turnRunning } from "../../host/dsh/web/static/transcript.js";

const user = (seq, text, source = { kind: "user" }) => ({
  seq,
  type: "message/user",
  time: 10 + seq,
  data: { text, source },
});
const assistant = (seq, text, toolCalls = []) => ({
  seq,
  type: "message/assistant",
  time: 10 + seq,
  data: { text, toolCalls },
});
const result = (seq, callId, outcome) => ({
  seq,
  type: "tool/result",
  time: 10 + seq,
  data: { callId, name: "schedule_create", ...outcome },
});

test("a user message becomes a user node with its text and source; a plugin's is a follow-up", () => {
  const [node] = toNodes([user(0, "hello", { kind: "user", id: "r1" })]);
  assert.deepEqual(node, {
    seq: 0,
    eventType: "message/user",
    time: 10,
    kind: "user",
    text: "hello",
    source: { kind: "user", id: "r1" },
  });
  const [followup] = toNodes([user(0, "hello", { kind: "schedule", id: "r1" })]);
  assert.equal(followup.kind, "followup");
  assert.deepEqual(followup.source, { kind: "schedule", id: "r1" });
});

test("a follow-up folds into the presented event its source names, once, and nowhere else", () => {
  const events = [
    { seq: 0, type: "schedule/change", time: 1, data: {} },
    { seq: 1, type: "schedule/change", time: 2, data: {} },
    user(2, "frame A", { kind: "schedule", dispatchSeq: 0 }),
    user(3, "again A", { kind: "schedule", dispatchSeq: 0 }),
    user(4, "frame B", { kind: "schedule", dispatchSeq: 1 }),
    user(5, "frame C", { kind: "schedule", dispatchSeq: 9 }),
    user(6, "mine", { kind: "user", dispatchSeq: 0 }),
  ];
  // seq 1 has no view yet (its dispatch is not durable): its follow-up stands alone for now.
  const nodes = toNodes(events, { 0: { prompt: "A" } });
  assert.deepEqual(nodes.map((node) => [node.seq, node.kind]), [
    [0, "presented"],
    [3, "followup"],
    [4, "followup"],
    [5, "followup"],
    [6, "user"],
  ]);
  assert.deepEqual(nodes[0].followup, { seq: 2, text: "frame A", source: { kind: "schedule", dispatchSeq: 0 }, time: 12 });
  const later = toNodes(events, { 0: { prompt: "A" }, 1: { prompt: "B" } });
  assert.equal(later[1].followup.text, "frame B");
});

test("an assistant message holds its tool calls, each with its result once it arrives", () => {
  const nodes = toNodes([
    assistant(1, "on it", [
      { id: "c1", name: "schedule_create", arguments: { prompt: "tea", after_seconds: 60 } },
      { id: "c2", name: "schedule_list", arguments: {} },
    ]),
    result(2, "c1", { value: { id: "r1" } }),
  ]);
  assert.equal(nodes.length, 1, "the result is drawn with its call, not on its own");
  const [message] = nodes;
  const toolResult = message.toolCalls[0].result;
  assert.equal(message.kind, "assistant");
  assert.equal(message.text, "on it");
  assert.deepEqual(
    message.toolCalls.map((call) => [call.id, call.resultSeq]),
    [
      ["c1", 2],
      ["c2", null],
    ],
  );
  assert.deepEqual(message.toolCalls[0].arguments, { prompt: "tea", after_seconds: 60 });
  assert.equal(toolResult.kind, "tool-result");
  assert.equal(toolResult.ok, true);
  assert.equal(toolResult.callSeq, 1);
  assert.deepEqual(toolResult.value, { id: "r1" });
  assert.equal(toolResult.seq, 2);
  assert.equal(message.toolCalls[1].result, null);
});

test("a second result for the same call id is shown on its own", () => {
  const nodes = toNodes([
    assistant(0, "", [{ id: "c1", name: "x", arguments: {} }]),
    result(1, "c1", { value: 1 }),
    result(2, "c1", { value: 2 }),
  ]);
  assert.deepEqual(nodes.map((node) => [node.kind, node.seq]), [["assistant", 0], ["tool-result", 2]]);
  assert.equal(nodes[1].callSeq, null);
});

test("a turn runs from its message/user until its turn/end or a new lifecycle", () => {
  assert.equal(turnRunning([]), false);
  assert.equal(turnRunning([user(0, "hi")]), true);
  assert.equal(turnRunning([user(0, "hi"), assistant(1, "", [{ id: "c", name: "x" }]), result(2, "c", { value: 1 })]), true);
  assert.equal(turnRunning([user(0, "hi"), { seq: 1, type: "turn/end", data: { status: "ok" } }]), false);
  assert.equal(turnRunning([user(0, "hi"), { seq: 1, type: "session/end-seed", data: {} }]), false);
  assert.equal(turnRunning([assistant(0, "no user message in the window")]), false);
});

test("the newest session/title event names the Session", () => {
  const title = (seq, value) => ({ seq, type: "session/title", time: seq, data: { title: value } });
  assert.equal(latestTitle([user(0, "x")]), null);
  assert.equal(latestTitle([title(0, "First"), user(1, "x"), title(2, "Second")]), "Second");
  assert.equal(latestTitle([title(0, "Kept"), title(1, "  "), { seq: 2, type: "session/title", data: null }]), "Kept");
  assert.deepEqual(toNodes([title(0, "hidden")]), [], "a title is not a transcript entry");
});

test("a failed tool result carries its error, and an orphan result has no call", () => {
  const [node] = toNodes([result(5, "nope", { error: { code: "bad_args", message: "after_seconds" } })]);
  assert.equal(node.ok, false);
  assert.deepEqual(node.error, { code: "bad_args", message: "after_seconds" });
  assert.equal(node.callSeq, null);
});

test("a failed turn is shown plainly; a successful one and markers are hidden", () => {
  const nodes = toNodes([
    { seq: 0, type: "session/end-seed", time: 1, data: {} },
    { seq: 1, type: "turn/end", time: 2, data: { status: "ok" } },
    { seq: 2, type: "turn/end", time: 3, data: { status: "error", error: { code: "model_absent", message: "no model" } } },
    { seq: 3, type: "turn/end", time: 4, data: { status: "error" } },
  ]);
  assert.deepEqual(
    nodes.map((node) => [node.seq, node.kind, node.error]),
    [
      [2, "turn-error", { code: "model_absent", message: "no model" }],
      [3, "turn-error", { code: "error", message: "" }],
    ],
  );
});

test("any event with a view becomes a presented node keyed by its event type", () => {
  const dispatch = { seq: 7, type: "schedule/change", time: 9, data: { op: "dispatch", id: "r1" } };
  const view = { scheduleId: "r1", prompt: "tea", occurrenceAt: "2024-01-01T00:00:00.000Z", deliveryMode: "session-local" };
  for (const views of [new Map([[7, view]]), { 7: view }]) {
    const [node] = toNodes([dispatch], views);
    assert.equal(node.kind, "presented");
    assert.equal(node.eventType, "schedule/change");
    assert.deepEqual(node.view, view);
    assert.deepEqual(node.data, dispatch.data);
  }
  // A host type with a view is presented too: the view wins.
  assert.equal(toNode(user(1, "x"), { custom: true }).kind, "presented");
});

test("plugin events without a view produce no node", () => {
  const create = { seq: 3, type: "schedule/change", time: 1, data: { op: "create" } };
  assert.deepEqual(toNodes([create]), []);
  assert.deepEqual(toNodes([create], "not views"), []);
});

test("malformed data degrades to empty text instead of throwing", () => {
  const nodes = toNodes([
    { seq: 0, type: "message/user", time: 1, data: null },
    { seq: 1, type: "message/assistant", time: 1, data: { text: 5, toolCalls: [null, { id: 1 }] } },
    { seq: 2, type: "tool/result", time: 1, data: [] },
  ]);
  assert.deepEqual(nodes[0].source, { kind: "user" });
  assert.equal(nodes[0].text, "");
  assert.equal(nodes[1].text, "");
  assert.deepEqual(nodes[1].toolCalls, [{ id: "", name: "", arguments: null, resultSeq: null, result: null }]);
  assert.equal(nodes[2].ok, true);
  assert.equal(nodes[2].value, null);
  assert.equal(toNode({ seq: 0, type: "message/user", data: { text: "a", source: { id: 1 } } }).source.kind, "user");
});

test("a failed turn offers the person's message again until they write again", () => {
  const failed = (seq, code = "model_unavailable") =>
    ({ seq, type: "turn/end", time: seq, data: { status: "error", error: { code, message: "down" } } });
  const nodes = toNodes([
    user(0, "first"),
    failed(1),
    user(2, "second"),
    failed(3),
    failed(4, "model_failed"),
  ]);
  const errors = nodes.filter((node) => node.kind === "turn-error");
  assert.deepEqual(errors.map((node) => [node.seq, node.retry]), [
    [1, null], // the person wrote again after it
    [3, "second"],
    [4, null], // a second failure in a row: its message is the one above, already offered
  ]);
  // A window that starts after the person's message has nothing to send again.
  assert.equal(toNodes([failed(9)])[0].retry, null);
});
