import assert from "node:assert/strict";
import { test } from "node:test";

import { PendingMessages } from "../../host/dsh/web/static/pending.js";

const userEvent = (seq, text, kind = "user") => ({
  seq,
  type: "message/user",
  time: seq,
  data: { text, source: { kind } },
});

test("a sent message stays pending until its message/user event arrives", () => {
  const pending = new PendingMessages();
  const id = pending.add("hello", 3);
  assert.deepEqual(pending.list().map((item) => [item.text, item.state]), [["hello", "sending"]]);
  pending.queued(id);
  assert.equal(pending.list()[0].state, "queued");
  assert.equal(pending.reconcile([userEvent(2, "hello")]), false, "an older identical message does not count");
  assert.equal(pending.reconcile([userEvent(3, "hello", "schedule")]), false, "nor a plugin's message");
  assert.equal(pending.reconcile([userEvent(4, "hello\n")]), true, "surrounding whitespace is ignored");
  assert.deepEqual(pending.list(), []);
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

test("a refused message stays, marked failed, until dismissed", () => {
  const pending = new PendingMessages();
  const id = pending.add("x", 0);
  pending.failed(id, "HTTP 500");
  pending.reconcile([userEvent(0, "x")]);
  assert.deepEqual(pending.list().map((item) => [item.state, item.error]), [["failed", "HTTP 500"]]);
  pending.dismiss(id);
  assert.deepEqual(pending.list(), []);
  assert.equal(pending.reconcile([{ seq: 0, type: "message/user", data: null }]), false);
});
