import assert from "node:assert/strict";
import { test } from "node:test";

import { DEFAULT_MESSAGES, PendingMessages, describeError } from "../../host/dsh/web/static/pending.js";

const userEvent = (seq, text, kind = "user") => ({
  seq,
  type: "message/user",
  time: seq,
  data: { text, source: { kind } },
});
const event = (seq, type, data = {}) => ({ seq, type, time: seq, data });
const states = (pending) => pending.list().map((item) => [item.text, item.state, item.reason]);

test("a sent message stays pending until its message/user event arrives", () => {
  const pending = new PendingMessages();
  const id = pending.add("hello", 3);
  assert.deepEqual(pending.list().map((item) => [item.text, item.state]), [["hello", "sending"]]);
  assert.equal(pending.waiting, true);
  pending.queued(id, 3);
  assert.deepEqual([pending.list()[0].state, pending.list()[0].queuedAt], ["queued", 3]);
  assert.equal(pending.reconcile([userEvent(2, "hello")]), false, "an older identical message does not count");
  assert.equal(pending.reconcile([userEvent(3, "hello", "schedule")]), false, "nor a plugin's message");
  assert.equal(pending.reconcile([userEvent(4, "hello\n")]), true, "surrounding whitespace is ignored");
  assert.deepEqual(pending.list(), []);
  assert.equal(pending.waiting, false);
});

test("a queued length that is not a log length is not trusted", () => {
  const pending = new PendingMessages();
  const id = pending.add("x", 0);
  pending.queued(id, "7");
  assert.equal(pending.list()[0].queuedAt, null);
  pending.queued(id, -1);
  assert.equal(pending.list()[0].queuedAt, null);
});

test("each stored event settles one pending message, oldest first", () => {
  const pending = new PendingMessages();
  const first = pending.add("same", 0);
  pending.add("same", 0);
  pending.reconcile([userEvent(0, "same")]);
  assert.equal(pending.list().length, 1);
  assert.notEqual(pending.list()[0].id, first);
  pending.reconcile([userEvent(0, "same"), userEvent(1, "same")]);
  assert.equal(pending.list().length, 0);
});

test("a rejected message stays, failed, until retried or dismissed: the host did not store it", () => {
  const pending = new PendingMessages();
  const id = pending.add("x", 0);
  pending.failed(id, "text too long");
  assert.equal(pending.waiting, false);
  pending.reconcile([userEvent(0, "x")]);
  assert.deepEqual(states(pending), [["x", "failed", "rejected"]]);
  assert.equal(pending.list()[0].error, "text too long");
  assert.equal(pending.dismiss(id), true);
  assert.equal(pending.dismiss(id), false);
  assert.deepEqual(pending.list(), []);
  assert.equal(pending.reconcile([{ seq: 0, type: "message/user", data: null }]), false);
});

test("a message that failed with a doubt is settled if it was stored after all", () => {
  const pending = new PendingMessages();
  const waiting = pending.add("same", 0);
  const doubtful = pending.add("same", 0);
  pending.failed(doubtful, "Failed to fetch", "error");
  pending.queued(waiting, 0);
  pending.reconcile([userEvent(0, "same")]);
  assert.deepEqual(pending.list().map((item) => item.id), [doubtful], "a waiting entry takes the event first");
  pending.reconcile([userEvent(0, "same"), userEvent(1, "same")]);
  assert.deepEqual(pending.list(), []);
});

test("retry sends the same text again from the current end of the window", () => {
  const pending = new PendingMessages();
  const id = pending.add("again", 2);
  assert.equal(pending.retry(id, 5), null, "only a failed entry is retried");
  pending.failed(id, "offline", "error");
  assert.equal(pending.retry(id, 5), "again");
  assert.deepEqual(pending.list().map((item) => [item.id, item.state, item.afterSeq, item.error]), [[id, "sending", 5, null]]);
  assert.equal(pending.retry(99, 0), null);
});

test("a restart or resume after the message was queued, without it, means it was lost", () => {
  const pending = new PendingMessages();
  const id = pending.add("lost one", 4);
  pending.queued(id, 4);
  const window = [event(3, "turn/end", { status: "ok" }), event(4, "session/end-seed"), userEvent(5, "other")];
  assert.equal(pending.reconcile(window), true);
  assert.deepEqual(states(pending), [["lost one", "failed", "lost"]]);
  assert.equal(pending.list()[0].error, DEFAULT_MESSAGES.lost);
  // It was stored after all (e.g. the page saw the new lifecycle first): settled.
  pending.reconcile([...window, userEvent(6, "lost one")]);
  assert.deepEqual(pending.list(), []);
});

test("the resume a message itself causes does not count: it comes before the queued point", () => {
  const pending = new PendingMessages();
  const id = pending.add("wake", 2);
  pending.queued(id, 3);
  pending.reconcile([event(1, "turn/end", { status: "ok" }), event(2, "session/end-seed")]);
  assert.deepEqual(states(pending), [["wake", "queued", null]]);
  pending.reconcile([event(1, "turn/end"), event(2, "session/end-seed"), userEvent(3, "wake")]);
  assert.deepEqual(pending.list(), []);
});

test("a turn that ends with no message/user, when none was running, was the message's own", () => {
  const pending = new PendingMessages();
  const first = pending.add("too big", 1);
  const second = pending.add("next", 1);
  pending.queued(first, 1);
  pending.queued(second, 1);
  const error = { code: "invalid_message", message: "over the limit" };
  pending.reconcile([event(0, "turn/end", { status: "ok" }), event(1, "turn/end", { status: "error", error })]);
  assert.deepEqual(states(pending), [["too big", "failed", "turn"], ["next", "queued", null]]);
  assert.equal(pending.list()[0].error, "invalid_message: over the limit");
});

test("a turn already running when the message was queued ends without it, and that is fine", () => {
  const pending = new PendingMessages();
  const id = pending.add("later", 2);
  pending.queued(id, 2);
  const window = [userEvent(0, "earlier"), event(1, "message/assistant", { text: "…" }), event(2, "turn/end", { status: "ok" })];
  pending.reconcile(window);
  assert.deepEqual(states(pending), [["later", "queued", null]]);
  pending.reconcile([...window, userEvent(3, "reminder", "schedule"), event(4, "turn/end", { status: "ok" })]);
  assert.deepEqual(states(pending), [["later", "queued", null]], "another source's turn is not ours");
});

test("nothing is concluded when the window does not reach back to where the message was queued", () => {
  const pending = new PendingMessages();
  const id = pending.add("x", 10);
  pending.queued(id, 10);
  pending.reconcile([event(12, "session/end-seed")]);
  assert.deepEqual(states(pending), [["x", "queued", null]], "below the window");
  pending.reconcile([event(8, "message/assistant"), event(9, "message/assistant")]);
  assert.deepEqual(states(pending), [["x", "queued", null]], "the window has not reached it yet");
  pending.reconcile([event(8, "message/assistant"), event(9, "message/assistant"), event(10, "turn/end")]);
  assert.deepEqual(states(pending), [["x", "queued", null]], "unknown whether a turn was running");
  const unknown = new PendingMessages();
  unknown.add("y", 0);
  unknown.reconcile([event(0, "session/end-seed")]);
  assert.deepEqual(states(unknown), [["y", "sending", null]], "no queued point yet");
});

test("a cold Session holds no queued message: lost() fails every queued one", () => {
  const pending = new PendingMessages();
  const sending = pending.add("a", 0);
  const queued = pending.add("b", 0);
  pending.queued(queued, 0);
  assert.equal(pending.lost("the host restarted"), true);
  assert.deepEqual(states(pending), [["a", "sending", null], ["b", "failed", "lost"]]);
  assert.equal(pending.list()[1].error, "the host restarted");
  assert.equal(pending.lost("again"), false);
  assert.ok(sending);
});

test("describeError words a turn/end error", () => {
  assert.equal(describeError({ code: "x", message: "y" }), "x: y");
  assert.equal(describeError({ code: "x" }), "x");
  assert.equal(describeError(null), "");
  assert.equal(DEFAULT_MESSAGES.turn(undefined), "the turn ended without storing it");
});
